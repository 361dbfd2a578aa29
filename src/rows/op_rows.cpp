// The per-operation listing of `plan --ops` and `validate --ops` (rows/op_rows.h).
#include "rows/op_rows.h"

#include <fmt/format.h>

namespace gpudays {
namespace {

double total_s(const std::vector<OpTime>& ops) {
  double s = 0.0;
  for (const OpTime& op : ops) s += op.forward_s + op.backward_s;
  return s;
}

}  // namespace

void print_op_breakdown(std::ostream& out,
                        const std::vector<OpTime>& ops,
                        int64_t micro_batch,
                        const std::string& configuration) {
  const double all_s = total_s(ops);
  out << fmt::format(
      "\nWhere a micro-step of {} goes (micro-batch {}): the GPU's kernels alone, {:.1f} ms; the "
      "host's launch queue, recomputation, communication, the optimizer and calibration from "
      "trials come on top (the plan's step time)\n",
      configuration,
      micro_batch,
      all_s * 1e3);
  out << fmt::format("{:<8} {:<30} {:>5} {:>11} {:>12} {:>6} {:>11} {:>8}  {}\n",
                     "part",
                     "operation",
                     "count",
                     "forward ms",
                     "backward ms",
                     "share",
                     "forward GB",
                     "kept GB",
                     "bound by");
  for (const OpTime& op : ops) {
    const double s = op.forward_s + op.backward_s;
    out << fmt::format("{:<8} {:<30} {:>5} {:>11.3f} {:>12.3f} {:>5.1f}% {:>11.3f} {:>8.3f}  {}\n",
                       op.part,
                       op.name,
                       op.count,
                       op.forward_s * 1e3,
                       op.backward_s * 1e3,
                       all_s > 0.0 ? 100.0 * s / all_s : 0.0,
                       op.forward_bytes / 1e9,
                       op.saved_bytes / 1e9,
                       op.memory_bound ? "memory" : "arithmetic");
  }
}

nlohmann::json op_breakdown_json(const std::vector<OpTime>& ops) {
  nlohmann::json out = nlohmann::json::array();
  for (const OpTime& op : ops) {
    out.push_back({{"part", op.part},
                   {"name", op.name},
                   {"count", op.count},
                   {"forward_ms", op.forward_s * 1e3},
                   {"backward_ms", op.backward_s * 1e3},
                   {"forward_gb", op.forward_bytes / 1e9},
                   {"saved_gb", op.saved_bytes / 1e9},
                   {"memory_bound", op.memory_bound}});
  }
  return out;
}

}  // namespace gpudays
