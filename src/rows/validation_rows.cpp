// The validation report as a table, CSV or JSON.
#include "rows/validation_rows.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "common/units.h"
#include "rows/memory_check_rows.h"
#include "rows/op_rows.h"
#include "rows/plan_rows.h"

namespace gpudays {
namespace {

std::string percent(double fraction) {
  return fmt::format("{:+.1f}%", 100.0 * fraction);
}

std::string figure(double value) {
  return fmt::format("{:.4g}", value);
}

std::string configuration(const ValidationCase& v) {
  if (v.skipped) return "";
  return fmt::format("{}, mb {}, acc {}",
                     describe(v.config.methods),
                     v.config.micro_batch_size,
                     v.config.grad_acc_steps);
}

void print_summaries(std::ostream& out, const ValidationReport& report) {
  Table table({"group", "cases", "MAPE", "mean error", "max |error|", "error p10", "error p90"});
  auto add = [&table](const ErrorSummary& s) {
    table.add_row({s.group,
                   std::to_string(s.cases),
                   fmt::format("{:.1f}%", 100.0 * s.mape),
                   percent(s.mean_error),
                   fmt::format("{:.1f}%", 100.0 * s.max_abs_error),
                   percent(s.low_error),
                   percent(s.high_error)});
  };
  for (const ErrorSummary& s : report.by_gpu) add(s);
  for (const ErrorSummary& s : report.by_split) add(s);
  add(report.overall);
  table.print(out);
}

// The checking half's summary; null when it has no timed case.
const ErrorSummary* check_summary(const ValidationReport& report) {
  for (const ErrorSummary& s : report.by_split)
    if (s.group == to_string(MeasurementSplit::kCheck)) return &s;
  return nullptr;
}

std::string target_word(std::optional<bool> met) {
  if (!met) return fmt::format("fewer than {} cases", kGroupTargetMinCases);
  return *met ? "met" : "missed";
}

void print_targets(std::ostream& out, const ValidationReport& report) {
  const ErrorSummary* check = check_summary(report);
  if (check == nullptr) return;
  std::string selection;
  if (!report.selected_case.empty()) {
    selection = fmt::format(", the case {} only (--case; the targets hold the whole half)",
                            report.selected_case);
  } else if (!report.selected_gpu.empty()) {
    selection = fmt::format(", {} cases only (--gpu; the targets hold the whole half)",
                            report.selected_gpu);
  }
  out << fmt::format(
      "\nTargets, checking half{}: MAPE at most {:.0f}% ({:.1f}% over {} cases: {}); each GPU "
      "generation and family with at least {} cases at most {:.0f}%:\n",
      selection,
      100.0 * kCheckMapeTarget,
      100.0 * check->mape,
      check->cases,
      check->mape <= kCheckMapeTarget ? "met" : "missed",
      kGroupTargetMinCases,
      100.0 * kGroupMapeTarget);
  Table table({"group", "cases", "MAPE", "mean error", "max |error|", "target"});
  for (const ErrorSummary& s : report.check_by_group) {
    table.add_row({s.group,
                   std::to_string(s.cases),
                   fmt::format("{:.1f}%", 100.0 * s.mape),
                   percent(s.mean_error),
                   fmt::format("{:.1f}%", 100.0 * s.max_abs_error),
                   target_word(group_target_met(s))});
  }
  table.print(out);
}

void print_coverage(std::ostream& out, const ValidationReport& report) {
  if (!report.coverage) return;
  const CoverageReport& c = *report.coverage;
  out << "\nRange coverage: checking-half cases inside the 10th-90th percentile range that the "
         "fitting half's residuals give them (target 70-90%):\n";
  Table table({"group", "cases", "inside", "share"});
  auto add = [&table](const std::string& kind, const RangeCoverage& r) {
    table.add_row({kind + r.group,
                   std::to_string(r.cases),
                   std::to_string(r.inside),
                   fmt::format("{:.0f}%", 100.0 * r.share())});
  };
  for (const RangeCoverage& r : c.by_architecture) add("gpu ", r);
  for (const RangeCoverage& r : c.by_family) add("family ", r);
  add("", c.overall);
  table.print(out);
}

nlohmann::json coverage_json(const RangeCoverage& r) {
  return {{"group", r.group}, {"cases", r.cases}, {"inside", r.inside}, {"share", r.share()}};
}

nlohmann::json summary_json(const ErrorSummary& s) {
  return {{"group", s.group},
          {"cases", s.cases},
          {"mape", s.mape},
          {"mean_error", s.mean_error},
          {"max_abs_error", s.max_abs_error},
          {"low_error", s.low_error},
          {"high_error", s.high_error}};
}

nlohmann::json case_json(const ValidationCase& v) {
  nlohmann::json j = {{"source", v.source_id},
                      {"case", v.name},
                      {"citation", v.citation},
                      {"model", v.model},
                      {"gpu", v.gpu},
                      {"gpu_architecture", v.point.architecture},
                      {"family", v.point.family},
                      {"nodes", v.nodes},
                      {"gpus_per_node", v.gpus_per_node},
                      {"split", to_string(v.split)},
                      {"trusted", v.trusted},
                      {"skipped", v.skipped},
                      {"skip_reason", v.skip_reason},
                      {"notes", v.notes}};
  if (v.skipped) return j;
  const MethodSet& m = v.config.methods;
  j.update({{"free_lunch", m.free_lunch},
            {"activation_checkpointing", m.activation_checkpointing},
            {"sharding", to_string(m.sharding)},
            {"micro_batch_size", v.config.micro_batch_size},
            {"grad_acc_steps", v.config.grad_acc_steps},
            {"global_batch", v.global_batch},
            {"memory_only", v.memory_only},
            {"metric", v.metric},
            {"published", v.published},
            {"predicted", v.predicted},
            {"approximate", v.approximate},
            {"error", v.error},
            {"predicted_tokens_per_s_per_gpu", v.predicted_tokens_per_s_per_gpu},
            {"fits", v.row->fits},
            {"predicted_memory_gib", v.row->peak_memory_bytes() / kGiB}});
  j["plan_row"] = plan_row_json(*v.row);  // the planned row: its memory and time breakdowns
  if (!v.ops.empty()) j["ops"] = op_breakdown_json(v.ops);
  j["published_tokens_per_s_per_gpu"] = v.published_tokens_per_s_per_gpu
                                            ? nlohmann::json(*v.published_tokens_per_s_per_gpu)
                                            : nlohmann::json(nullptr);
  return j;
}

}  // namespace

Table cases_table(const ValidationReport& report) {
  Table table({"split",
               "source",
               "case",
               "model",
               "gpus",
               "gpu",
               "configuration",
               "metric",
               "published",
               "predicted",
               "error"});
  for (const ValidationCase& v : report.cases) {
    if (v.skipped) continue;
    table.add_row({to_string(v.split) + (v.trusted ? "" : " (untrusted)"),
                   v.source_id,
                   v.name,
                   v.model,
                   std::to_string(v.gpus()),
                   v.gpu,
                   configuration(v),
                   v.metric,
                   figure(v.published),
                   figure(v.predicted),
                   percent(v.error)});
  }
  return table;
}

void print_table(std::ostream& out, const ValidationReport& report) {
  cases_table(report).print(out);
  const bool memory_only =
      std::any_of(report.cases.begin(), report.cases.end(), [](const ValidationCase& v) {
        return v.evaluated() && v.memory_only;
      });
  if (memory_only) {
    out << "\nMemory-only cases (metric peak_memory_gib: the source publishes a peak per GPU and "
           "no throughput) compare GiB per GPU, error = predicted / published - 1 (positive: the "
           "planner asks for more); they are in the peak-memory check only, in no time "
           "statistic below.\n";
  }
  out << "\nError = predicted throughput / published - 1 (positive: the planner is optimistic). "
         "MAPE over trusted cases; p10 and p90 give plan's and cost's error bars:\n";
  print_summaries(out, report);
  print_targets(out, report);
  print_coverage(out, report);
  print_memory_check(out, report);
  if (!report.worst.empty()) out << "\nWorst cases:\n";
  for (size_t i : report.worst) {
    const ValidationCase& v = report.cases[i];
    out << fmt::format("  {} {}/{}: {} ({} x {}, {})\n",
                       percent(v.error),
                       v.source_id,
                       v.name,
                       v.model,
                       v.gpus(),
                       v.gpu,
                       configuration(v));
  }
  for (const ValidationCase& v : report.cases) {
    if (v.ops.empty()) continue;
    print_op_breakdown(out,
                       v.ops,
                       v.config.micro_batch_size,
                       fmt::format("{}/{} as planned ({})", v.source_id, v.name, configuration(v)));
  }
  size_t skipped = 0;
  for (const ValidationCase& v : report.cases) skipped += v.skipped ? 1 : 0;
  if (skipped > 0) out << fmt::format("\nNot planned ({} cases):\n", skipped);
  for (const ValidationCase& v : report.cases) {
    if (v.skipped) out << fmt::format("  {}/{}: {}\n", v.source_id, v.name, v.skip_reason);
  }
}

void print_json(std::ostream& out,
                const ValidationReport& report,
                const std::string& calibration_path) {
  nlohmann::json j;
  j["calibration"] =
      calibration_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(calibration_path);
  j["cases"] = nlohmann::json::array();
  for (const ValidationCase& v : report.cases) j["cases"].push_back(case_json(v));
  j["overall"] = summary_json(report.overall);
  j["by_gpu"] = nlohmann::json::array();
  for (const ErrorSummary& s : report.by_gpu) j["by_gpu"].push_back(summary_json(s));
  j["by_split"] = nlohmann::json::array();
  for (const ErrorSummary& s : report.by_split) j["by_split"].push_back(summary_json(s));
  const ErrorSummary* check = check_summary(report);
  nlohmann::json targets = {
      {"check_mape", kCheckMapeTarget},
      {"check_met", check ? nlohmann::json(check->mape <= kCheckMapeTarget) : nullptr},
      {"group_mape", kGroupMapeTarget},
      {"group_min_cases", kGroupTargetMinCases},
      {"selected_gpu",
       report.selected_gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.selected_gpu)},
      {"selected_case",
       report.selected_case.empty() ? nlohmann::json(nullptr)
                                    : nlohmann::json(report.selected_case)},
      {"check_by_group", nlohmann::json::array()}};
  for (const ErrorSummary& s : report.check_by_group) {
    nlohmann::json g = summary_json(s);
    const std::optional<bool> met = group_target_met(s);
    g["target_met"] = met ? nlohmann::json(*met) : nlohmann::json(nullptr);
    targets["check_by_group"].push_back(g);
  }
  j["targets"] = targets;
  j["range_coverage"] = nullptr;
  if (report.coverage) {
    const CoverageReport& c = *report.coverage;
    nlohmann::json coverage = {{"overall", coverage_json(c.overall)},
                               {"by_gpu_architecture", nlohmann::json::array()},
                               {"by_family", nlohmann::json::array()},
                               {"outside", nlohmann::json::array()}};
    for (const RangeCoverage& r : c.by_architecture)
      coverage["by_gpu_architecture"].push_back(coverage_json(r));
    for (const RangeCoverage& r : c.by_family) coverage["by_family"].push_back(coverage_json(r));
    for (size_t i : c.outside)
      coverage["outside"].push_back(report.cases[i].source_id + "/" + report.cases[i].name);
    j["range_coverage"] = coverage;
  }
  j["peak_memory"] = memory_check_json(report);
  j["worst"] = nlohmann::json::array();
  for (size_t i : report.worst) {
    j["worst"].push_back(report.cases[i].source_id + "/" + report.cases[i].name);
  }
  out << json_text(j, 2) << "\n";
}

}  // namespace gpudays
