// The per-operation times of a micro-step (plan/op_breakdown.h).
#include "plan/op_breakdown.h"

#include <algorithm>

#include "plan/device_model.h"
#include "plan/workload.h"

namespace gpudays {
namespace {

// Whether the operation's time is its bytes at the achievable bandwidth (memory-bound kernels
// always; a GEMM when its memory leg is the longer, as plain attention's score products are).
bool bytes_bound(const DeviceModel& device, const Op& op) {
  if (op.cls == OpClass::kMemory || op.cls == OpClass::kDepthwiseConv) return true;
  const double memory_s = op.bytes / device.bandwidth_bytes_per_s();
  return memory_s >= device.op_time_s(op, /*backward=*/false) * (1.0 - 1e-9);
}

void add(std::vector<OpTime>& out,
         const std::string& part,
         const std::vector<Op>& ops,
         int64_t count,
         const DeviceModel& device) {
  for (const Op& op : ops) {
    OpTime t;
    t.part = part;
    t.name = op.name;
    t.count = count;
    const double n = static_cast<double>(count);
    t.forward_s = n * device.op_time_s(op, /*backward=*/false);
    t.backward_s = n * device.op_time_s(op, /*backward=*/true);
    t.forward_bytes = n * op.bytes;
    t.saved_bytes = n * op.saved_bytes;
    t.memory_bound = bytes_bound(device, op);
    out.push_back(t);
  }
}

}  // namespace

std::vector<OpTime> op_breakdown(const ModelSpec& model,
                                 const GpuSpec& gpu,
                                 int64_t micro_batch,
                                 bool free_lunch,
                                 const PlanOptions& options) {
  const Precision precision = model.recipe.precision;
  const DeviceModel device(gpu, precision, free_lunch, options.device, options.implementation.tf32);
  const Workload w = build_workload(
      model,
      planned_workload_options(model, micro_batch, free_lunch, options.implementation, gpu.kind));
  std::vector<OpTime> out;
  add(out, "stem", w.stem_ops, 1, device);
  for (const Block& block : w.blocks) add(out, block.name, block.ops, block.count, device);
  add(out, "head", w.head_ops, 1, device);
  std::stable_sort(out.begin(), out.end(), [](const OpTime& a, const OpTime& b) {
    return a.forward_s + a.backward_s > b.forward_s + b.backward_s;
  });
  return out;
}

}  // namespace gpudays
