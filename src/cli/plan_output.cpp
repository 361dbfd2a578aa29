// Planner output formats.
#include "cli/plan_output.h"

#include <fmt/format.h>

#include "cli/table.h"
#include "common/units.h"

namespace gpudays {
namespace {

std::string gib(double bytes) { return fmt::format("{:.1f}", bytes / kGiB); }

std::string throughput(const PlanRow& row, const ModelSpec& model) {
  if (model.family == Family::kConvnext) return format_si(row.samples_per_s) + " images/s";
  if (model.family == Family::kVit) {
    return format_si(row.samples_per_s) + " images/s (" + format_si(row.tokens_per_s) +
           " tokens/s)";
  }
  return format_si(row.tokens_per_s) + " tokens/s";
}

std::string memory_line(const MemoryBreakdown& m) {
  return fmt::format("weights {}, gradients {}, optimizer {}, activations {}, logits/loss {}, "
                     "temporary {}, framework {} (GiB)",
                     gib(m.weights_bytes), gib(m.gradients_bytes), gib(m.optimizer_bytes),
                     gib(m.activations_bytes), gib(m.logits_loss_bytes), gib(m.temporary_bytes),
                     gib(m.framework_bytes));
}

nlohmann::json range_json(const std::optional<TimeRange>& range) {
  if (!range) return nullptr;
  return {{"low", range->low}, {"high", range->high}};
}

std::string days_end(const std::optional<TimeRange>& range, double TimeRange::*end) {
  return range ? fmt::format("{:.1f}", *range.*end) : "";
}

}  // namespace

nlohmann::json plan_row_json(const PlanRow& row) {
  const MethodSet& m = row.config.methods;
  nlohmann::json j = {
      {"model", row.model},
      {"gpu", row.gpu},
      {"num_nodes", row.cluster.num_nodes},
      {"gpus_per_node", row.cluster.gpus_per_node},
      {"free_lunch", m.free_lunch},
      {"activation_checkpointing", m.activation_checkpointing},
      {"sharding", to_string(m.sharding)},
      {"offloading", m.offloading},
      {"micro_batch_size", row.config.micro_batch_size},
      {"grad_acc_steps", row.config.grad_acc_steps},
      {"fits", row.fits},
      {"peak_memory_bytes", static_cast<int64_t>(row.peak_memory_bytes())},
      {"step_time_s", row.step_time_s},
      {"samples_per_s", row.samples_per_s},
      {"tokens_per_s", row.tokens_per_s},
      {"training_days", row.training_days},
      {"gpu_days", row.gpu_days},
      {"gpu_days_ratio", row.gpu_days_ratio > 0 ? nlohmann::json(row.gpu_days_ratio) : nullptr},
      {"mfu", row.mfu},
      {"hfu", row.hfu},
      {"model_flops_per_sample", row.model_flops_per_sample},
      {"reason", row.reason},
  };
  const MemoryBreakdown& mem = row.memory;
  j["memory_bytes"] = {{"weights", mem.weights_bytes},         {"gradients", mem.gradients_bytes},
                       {"optimizer_state", mem.optimizer_bytes}, {"activations", mem.activations_bytes},
                       {"logits_loss", mem.logits_loss_bytes}, {"temporary", mem.temporary_bytes},
                       {"framework", mem.framework_bytes},      {"host_per_node", mem.host_bytes}};
  j["step_time_s_range"] = range_json(row.step_time_range_s);
  j["training_days_range"] = range_json(row.training_days_range);
  j["error_band"] = nullptr;
  if (row.error_band) {
    j["error_band"] = {{"basis", row.error_band->basis},
                       {"cases", row.error_band->cases},
                       {"low_error", row.error_band->low_error},
                       {"high_error", row.error_band->high_error}};
  }
  const TimeBreakdown& t = row.time;
  j["time_s"] = {{"compute", t.compute_s},
                 {"recompute", t.recompute_s},
                 {"communication", t.communication_s},
                 {"offload", t.offload_s},
                 {"optimizer", t.optimizer_s}};
  return j;
}

void print_plan_rows_table(std::ostream& out, const std::vector<PlanRow>& rows, bool csv) {
  Table table({"methods",
               "micro_batch",
               "grad_acc",
               "fits",
               "memory_gib",
               "step_s",
               "days",
               "days_low",
               "days_high",
               "gpu_days",
               "mfu",
               "reason"});
  for (const PlanRow& r : rows) {
    table.add_row({describe(r.config.methods),
                   std::to_string(r.config.micro_batch_size),
                   std::to_string(r.config.grad_acc_steps),
                   r.fits ? "yes" : "no",
                   gib(r.peak_memory_bytes()),
                   fmt::format("{:.3f}", r.step_time_s),
                   fmt::format("{:.1f}", r.training_days),
                   days_end(r.training_days_range, &TimeRange::low),
                   days_end(r.training_days_range, &TimeRange::high),
                   fmt::format("{:.1f}", r.gpu_days),
                   fmt::format("{:.1f}%", 100 * r.mfu),
                   r.reason});
  }
  if (csv) table.print_csv(out);
  else table.print(out);
}

namespace {

void print_evidence(std::ostream& out, const PlanRow& best, const PlanEvidence& evidence) {
  if (evidence.calibration.trials > 0) {
    out << fmt::format("  calibrated     step times x{:.3f} (median measured/predicted of {} "
                       "trial{} on this GPU and model family; uncalibrated {})\n",
                       evidence.calibration.step_time_factor, evidence.calibration.trials,
                       evidence.calibration.trials == 1 ? "" : "s",
                       format_duration_s(best.uncalibrated_step_time_s));
  }
  if (const auto& t = evidence.measured_best) {
    const std::string when = t->created_at.empty() ? "" : fmt::format("; {}", t->created_at);
    const std::string where = t->measured.device_name.empty() ? "" : fmt::format(" on {}", t->measured.device_name);
    out << fmt::format("  measured       {} per step, {} peak (predicted {}, {}){}{}\n",
                       format_duration_s(t->step_time_s()),
                       format_gib(static_cast<double>(t->measured.peak_memory_bytes)),
                       format_duration_s(best.step_time_s), format_gib(best.peak_memory_bytes()),
                       when, where);
  }
}

}  // namespace

void print_plan_summary(std::ostream& out, const ModelSpec& model, const GpuSpec& gpu,
                        const PlanResult& result, const std::vector<Suggestion>& suggestions,
                        const PlanEvidence& evidence) {
  size_t fitting = 0;
  for (const PlanRow& r : result.rows) fitting += r.fits ? 1 : 0;
  const PlanRow& any = result.rows.front();
  const std::string pinned =
      result.pin.empty() ? "" : fmt::format(" (pinned: {})", describe(result.pin));
  out << fmt::format(
      "{} on {} x {} ({}{}), {}: {} configuration{}{}, {} fit\n",
      model.name,
      any.cluster.world_size(),
      gpu.name,
      gpu.display_name,
      any.cluster.num_nodes > 1 ? fmt::format(", {} nodes", any.cluster.num_nodes) : "",
      to_string(model.recipe.precision),
      result.rows.size(),
      result.rows.size() == 1 ? "" : "s",
      pinned,
      fitting);
  if (!result.best) {
    out << fmt::format("Nothing fits: {}.\n", nothing_fits_reason(result, gpu));
    for (const Suggestion& s : suggestions) {
      out << fmt::format("  would fit: {} -> {}, {:.1f} days, {:.0f}% MFU\n", s.change,
                         describe(s.best.config.methods), s.best.training_days, 100 * s.best.mfu);
    }
    if (suggestions.empty()) out << "  no catalog GPU or count up to 512 GPUs fits either.\n";
    return;
  }
  const PlanRow& b = *result.best;
  const TimeBreakdown& t = b.time;
  out << fmt::format("Best: {}, micro-batch {}, gradient accumulation {}\n",
                     describe(b.config.methods), b.config.micro_batch_size, b.config.grad_acc_steps);
  const std::string step_range = b.step_time_range_s
                                     ? fmt::format(" ({}-{})",
                                                   format_duration_s(b.step_time_range_s->low),
                                                   format_duration_s(b.step_time_range_s->high))
                                     : "";
  out << fmt::format(
      "  step time      {}{} (compute {}, recompute {}, communication {}, offload {}, "
      "optimizer {})\n",
      format_duration_s(b.step_time_s),
      step_range,
      format_duration_s(t.compute_s),
      format_duration_s(t.recompute_s),
      format_duration_s(t.communication_s),
      format_duration_s(t.offload_s),
      format_duration_s(t.optimizer_s));
  out << fmt::format("  throughput     {}\n", throughput(b, model));
  std::string ratio;
  if (b.gpu_days_ratio > 0) {
    ratio = fmt::format(" ({:.2f}x the original {:g} GPU-days)", b.gpu_days_ratio,
                        model.reported_gpu_days());
  }
  const std::string days_range =
      b.training_days_range
          ? fmt::format(" ({:.1f}-{:.1f})", b.training_days_range->low, b.training_days_range->high)
          : "";
  out << fmt::format("  training       {:.1f} days{} for {} steps; {:.1f} GPU-days{}\n",
                     b.training_days,
                     days_range,
                     format_count(model.recipe.train_steps),
                     b.gpu_days,
                     ratio);
  if (b.error_band) {
    out << fmt::format(
        "  error range    10th-90th percentile of the planner's error on {} "
        "({:+.0f}% to {:+.0f}% of the time; `gpudays validate`)\n",
        b.error_band->basis,
        100 * b.error_band->low_error,
        100 * b.error_band->high_error);
  }
  out << fmt::format("  utilisation    MFU {:.1f}%, HFU {:.1f}% of the {} peak (matmul ceiling "
                     "{:.1f}%)\n",
                     100 * b.mfu, 100 * b.hfu, result.matmul_dtype,
                     100 * result.matmul_ceiling_fraction);
  out << fmt::format("  memory/GPU     {} of {}: {}\n", format_gib(b.peak_memory_bytes()),
                     format_gib(static_cast<double>(gpu.memory_bytes)), memory_line(b.memory));
  print_evidence(out, b, evidence);
  if (b.memory.host_bytes > 0) {
    out << fmt::format("  host memory    {} pinned per node of {}\n",
                       format_gib(b.memory.host_bytes),
                       describe_host_limit(result));
  }
}

}  // namespace gpudays
