// The plan row's columns, and the planner's summary and JSON document.
#include "rows/plan_rows.h"

#include <cmath>

#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "common/units.h"
#include "rows/method_columns.h"

namespace gpudays {
namespace {

std::string gib(double bytes) {
  return fmt::format("{:.1f}", bytes / kGiB);
}

std::string throughput(const PlanRow& row, const ModelSpec& model) {
  const FamilyTraits& family = family_traits(model.family);
  if (family.modality == Modality::kImage && !family.attention) {
    return format_si(row.samples_per_s) + " images/s";
  }
  if (family.modality == Modality::kImage) {  // patches are tokens
    return format_si(row.samples_per_s) + " images/s (" + format_si(row.tokens_per_s) +
           " tokens/s)";
  }
  return format_si(row.tokens_per_s) + " tokens/s";
}

std::string memory_line(const MemoryBreakdown& m) {
  return fmt::format(
      "weights {}, gradients {}, optimizer {}, activations {}, logits/loss {}, "
      "temporary {}, framework {}, fragmentation {}{}{} (GiB)",
      gib(m.weights_bytes),
      gib(m.gradients_bytes),
      gib(m.optimizer_bytes),
      gib(m.activations_bytes),
      gib(m.logits_loss_bytes),
      gib(m.temporary_bytes),
      gib(m.framework_bytes),
      gib(m.fragmentation_bytes),
      m.allocator_at_limit ? " (capped by the card)" : "",
      m.graph_pool_bytes > 0 ? ", CUDA graph pool " + gib(m.graph_pool_bytes) : std::string());
}

// The peak's range, where the allocator's cache has room to vary: " (61.2-77.9 GiB by the
// allocator's cache)"; empty at the card's limit (the line says so) and on the host CPU.
std::string memory_range(const MemoryBreakdown& m) {
  const std::string least = fmt::format("{:.1f}", m.least_bytes() / kGiB);
  const std::string most = fmt::format("{:.1f}", m.most_bytes() / kGiB);
  if (m.allocator_at_limit || least == most) return "";
  return fmt::format(" ({}-{} GiB by the allocator's cache)", least, most);
}

// What the data-parallel collectives cross and at what bandwidth, with the flag that changes it
// where a pair of cards may or may not have its NVLink bridge.
std::string interconnect_line(const PlanRow& row, const GpuSpec& gpu) {
  const CollectiveLink& c = row.collective;
  std::string what;
  switch (c.route) {
    case CollectiveRoute::kNone:
      return "";
    case CollectiveRoute::kGpuLink:
      what = is_pcie_link(c.link) ? c.link + " peer-to-peer" : c.link;
      break;
    case CollectiveRoute::kPairBridge:
      what = "the pair's NVLink bridge";
      break;
    case CollectiveRoute::kHostMemory:
      what = fmt::format("host memory over {} (no peer-to-peer; NCCL_P2P_DISABLE=1)", c.link);
      break;
    case CollectiveRoute::kNetwork:
      what = "the network between nodes";
      break;
  }
  std::string hint;
  const bool pair = row.cluster.num_nodes == 1 && row.cluster.gpus_per_node == 2;
  if (pair && gpu.pair_bridge_gb_per_s > 0 && c.route == CollectiveRoute::kGpuLink) {
    hint = "; no NVLink bridge (--pair-bridge on if the pair has one)";
  } else if (c.route == CollectiveRoute::kPairBridge) {
    hint = " (--pair-bridge off if the pair has none)";
  }
  return fmt::format("  interconnect   collectives over {} at {:.1f} GB/s per GPU{}\n",
                     what,
                     c.bus_bytes_per_s / kGB,
                     hint);
}

}  // namespace

namespace {

int64_t bytes(double b) {
  return static_cast<int64_t>(std::llround(b));
}

// A memory part per GPU in bytes, or a time part per step in seconds.
Column<PlanRow> memory_part(const char* part, double MemoryBreakdown::*field) {
  return {fmt::format("memory_{}_bytes", part),
          [field](const PlanRow& r) { return Cell{bytes(r.memory.*field)}; }};
}
Column<PlanRow> time_part(const char* part, double TimeBreakdown::*field) {
  return {fmt::format("time_{}_s", part),
          [field](const PlanRow& r) { return Cell{r.time.*field}; }};
}
// An end of the planner's range of a time (plan/error_band.h); null without one.
Column<PlanRow> time_range_end(const char* name,
                               std::optional<TimeRange> PlanRow::*range,
                               double TimeRange::*end) {
  return {name,
          [range, end](const PlanRow& r) { return r.*range ? Cell{(*(r.*range)).*end} : Cell{}; }};
}

// Every column but the method fields', which follow "methods".
std::vector<Column<PlanRow>> columns_but_methods() {
  using D = Display;
  return {
      {"model", [](const PlanRow& r) { return Cell{r.model}; }},
      {"gpu", [](const PlanRow& r) { return Cell{r.gpu}; }},
      {"num_nodes", [](const PlanRow& r) { return Cell{r.cluster.num_nodes}; }},
      {"gpus_per_node", [](const PlanRow& r) { return Cell{r.cluster.gpus_per_node}; }},
      {"methods", [](const PlanRow& r) { return Cell{describe(r.config.methods)}; }, D::kPlain},
      {"micro_batch_size",
       [](const PlanRow& r) { return Cell{r.config.micro_batch_size}; },
       D::kPlain},
      {"grad_acc_steps", [](const PlanRow& r) { return Cell{r.config.grad_acc_steps}; }, D::kPlain},
      {"fits", [](const PlanRow& r) { return Cell{r.fits}; }, D::kPlain},
      {"peak_memory_bytes",
       [](const PlanRow& r) { return Cell{bytes(r.peak_memory_bytes())}; },
       D::kGib},
      {"least_memory_bytes",
       [](const PlanRow& r) { return Cell{bytes(r.memory.least_bytes())}; },
       D::kGib},
      {"most_memory_bytes",
       [](const PlanRow& r) { return Cell{bytes(r.memory.most_bytes())}; },
       D::kGib},
      {"step_time_s", [](const PlanRow& r) { return Cell{r.step_time_s}; }, D::kFixed3},
      {"uncalibrated_step_time_s",
       [](const PlanRow& r) { return Cell{r.uncalibrated_step_time_s}; }},
      {"samples_per_s", [](const PlanRow& r) { return Cell{r.samples_per_s}; }},
      {"tokens_per_s", [](const PlanRow& r) { return Cell{r.tokens_per_s}; }},
      time_range_end("step_time_low_s", &PlanRow::step_time_range_s, &TimeRange::low),
      time_range_end("step_time_high_s", &PlanRow::step_time_range_s, &TimeRange::high),
      {"training_days", [](const PlanRow& r) { return Cell{r.training_days}; }, D::kFixed1},
      time_range_end("training_days_low", &PlanRow::training_days_range, &TimeRange::low),
      time_range_end("training_days_high", &PlanRow::training_days_range, &TimeRange::high),
      {"error_band_basis",
       [](const PlanRow& r) { return r.error_band ? Cell{r.error_band->basis} : Cell{}; }},
      {"error_band_cases",
       [](const PlanRow& r) { return r.error_band ? Cell{int64_t{r.error_band->cases}} : Cell{}; }},
      {"error_band_low_error",
       [](const PlanRow& r) { return r.error_band ? Cell{r.error_band->low_error} : Cell{}; }},
      {"error_band_high_error",
       [](const PlanRow& r) { return r.error_band ? Cell{r.error_band->high_error} : Cell{}; }},
      {"error_band_far",
       [](const PlanRow& r) { return r.error_band ? Cell{r.error_band->far_summary()} : Cell{}; }},
      {"input_images_per_s",
       [](const PlanRow& r) { return r.input.applies ? Cell{r.input.images_per_s} : Cell{}; }},
      {"input_step_time_s",
       [](const PlanRow& r) { return r.input.applies ? Cell{r.input.step_time_s} : Cell{}; }},
      {"input_bound", [](const PlanRow& r) { return Cell{r.input_bound}; }},
      {"gpu_days", [](const PlanRow& r) { return Cell{r.gpu_days}; }, D::kFixed1},
      {"gpu_days_ratio",
       [](const PlanRow& r) { return r.gpu_days_ratio > 0 ? Cell{r.gpu_days_ratio} : Cell{}; }},
      {"mfu", [](const PlanRow& r) { return Cell{r.mfu}; }, D::kPercent},
      {"hfu", [](const PlanRow& r) { return Cell{r.hfu}; }},
      {"model_flops_per_sample", [](const PlanRow& r) { return Cell{r.model_flops_per_sample}; }},
      memory_part("weights", &MemoryBreakdown::weights_bytes),
      memory_part("gradients", &MemoryBreakdown::gradients_bytes),
      memory_part("optimizer_state", &MemoryBreakdown::optimizer_bytes),
      memory_part("activations", &MemoryBreakdown::activations_bytes),
      memory_part("logits_loss", &MemoryBreakdown::logits_loss_bytes),
      memory_part("temporary", &MemoryBreakdown::temporary_bytes),
      memory_part("framework", &MemoryBreakdown::framework_bytes),
      memory_part("fragmentation", &MemoryBreakdown::fragmentation_bytes),
      {"allocator_at_limit", [](const PlanRow& r) { return Cell{r.memory.allocator_at_limit}; }},
      memory_part("graph_pool", &MemoryBreakdown::graph_pool_bytes),
      memory_part("host_per_node", &MemoryBreakdown::host_bytes),
      time_part("compute", &TimeBreakdown::compute_s),
      time_part("recompute", &TimeBreakdown::recompute_s),
      time_part("communication", &TimeBreakdown::communication_s),
      {"collective_link", [](const PlanRow& r) { return Cell{r.collective.name()}; }},
      {"collective_gb_per_s",
       [](const PlanRow& r) {
         return r.collective.route == CollectiveRoute::kNone
                    ? Cell{}
                    : Cell{r.collective.bus_bytes_per_s / kGB};
       }},
      time_part("offload", &TimeBreakdown::offload_s),
      time_part("optimizer", &TimeBreakdown::optimizer_s),
      {"layer_time_s", [](const PlanRow& r) { return Cell{r.layer_time_s}; }},
      {"reason", [](const PlanRow& r) { return Cell{r.reason}; }, D::kPlain},
  };
}

}  // namespace

const std::vector<Column<PlanRow>>& plan_columns() {
  static const std::vector<Column<PlanRow>> kColumns = with_method_columns<PlanRow>(
      columns_but_methods(), "methods", [](const PlanRow& r) -> auto& { return r.config.methods; });
  return kColumns;
}

nlohmann::json plan_row_json(const PlanRow& row) {
  return row_object(plan_columns(), row);
}

void print_plan_rows(std::ostream& out, const std::vector<PlanRow>& rows, RowFormat format) {
  write_rows(out, make_row_set("plan_row", plan_columns(), rows), format);
}

namespace {

// A suggestion as the user meets it: the full method search is the --methods flag's.
std::string suggestion_text(const Suggestion& s) {
  if (s.kind != SuggestionKind::kAllMethods) return s.change;
  return "--methods all (checkpointing, sharding, offloading)";
}

}  // namespace

nlohmann::json plan_json(const PlanResult& result,
                         const PlanEvidence& evidence,
                         const std::vector<Suggestion>& suggestions,
                         bool all_rows) {
  nlohmann::json out = json_document("plan_row");
  out["best"] = result.best ? plan_row_json(*result.best) : nlohmann::json(nullptr);
  out["calibration"] = {{"step_time_factor", evidence.calibration.step_time_factor},
                        {"trials", evidence.calibration.trials}};
  out["fitted_constants"] = evidence.fitted_constants_path.empty()
                                ? nlohmann::json(nullptr)
                                : nlohmann::json(evidence.fitted_constants_path);
  out["host_memory_bytes_per_node"] = result.host_memory_bytes_per_node;
  out["model_code"] = to_string(result.implementation.code);
  out["compiled"] = result.implementation.compiled;
  out["attention_kernel"] = to_string(attention_kernel(result.implementation));
  out["host_memory_is_default"] = result.host_memory_is_default;
  out["measured_best"] = nullptr;
  if (const auto& t = evidence.measured_best) {
    out["measured_best"] = {{"step_time_s", t->step_time_s()},
                            {"peak_memory_bytes", t->measured.peak_memory_bytes},
                            {"created_at", t->created_at}};
  }
  out["rows"] = nlohmann::json::array();
  if (all_rows) {
    for (const PlanRow& row : result.rows) out["rows"].push_back(plan_row_json(row));
  }
  out["suggestions"] = nlohmann::json::array();
  for (const Suggestion& s : suggestions) {
    out["suggestions"].push_back({{"change", suggestion_text(s)}, {"best", plan_row_json(s.best)}});
  }
  return out;
}

namespace {

void print_evidence(std::ostream& out, const PlanRow& best, const PlanEvidence& evidence) {
  if (evidence.calibration.trials > 0) {
    out << fmt::format(
        "  calibrated     step times x{:.3f} (median measured/predicted of {} "
        "trial{} on this GPU and model family; uncalibrated {})\n",
        evidence.calibration.step_time_factor,
        evidence.calibration.trials,
        evidence.calibration.trials == 1 ? "" : "s",
        format_duration_s(best.uncalibrated_step_time_s));
  }
  if (const auto& t = evidence.measured_best) {
    const std::string when = t->created_at.empty() ? "" : fmt::format("; {}", t->created_at);
    const std::string where =
        t->measured.device_name.empty() ? "" : fmt::format(" on {}", t->measured.device_name);
    out << fmt::format("  measured       {} per step, {} peak allocated (predicted {}, {}){}{}\n",
                       format_duration_s(t->step_time_s()),
                       format_gib(static_cast<double>(t->measured.peak_memory_bytes)),
                       format_duration_s(best.step_time_s),
                       format_gib(best.memory.allocated_bytes()),
                       when,
                       where);
  }
}

}  // namespace

void print_plan_summary(std::ostream& out,
                        const ModelSpec& model,
                        const GpuSpec& gpu,
                        const PlanResult& result,
                        const std::vector<Suggestion>& suggestions,
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
  const Implementation& code = result.implementation;
  if (code.code != ModelCode::kEngine) {
    out << fmt::format(
        "Model code: {}{}, as that stack runs it (gpudays' trainer runs the engine's)\n",
        to_string(code.code),
        code.compiled ? " under torch.compile" : "");
  }
  if (code.attention_kernel) {
    out << fmt::format("Attention kernel: {} (--attention-kernel)\n",
                       to_string(*code.attention_kernel));
  }
  if (gpu.compute_clock_factor() < 1.0) {
    out << fmt::format(
        "Power limit: {:g} W of the {:g} W TDP: compute at {:.3f} of its rate (the clock as the "
        "cube root of the power)\n",
        gpu.power_limit_w,
        gpu.tdp_w,
        gpu.compute_clock_factor());
  }
  if (!result.best) {
    out << fmt::format("Nothing fits: {}.\n", nothing_fits_reason(result, gpu));
    for (const Suggestion& s : suggestions) {
      out << fmt::format("  would fit: {} -> {}, {:.1f} days, {:.0f}% MFU\n",
                         suggestion_text(s),
                         describe(s.best.config.methods),
                         s.best.training_days,
                         100 * s.best.mfu);
    }
    if (suggestions.empty()) out << "  no catalog GPU or count up to 512 GPUs fits either.\n";
    return;
  }
  const PlanRow& b = *result.best;
  const TimeBreakdown& t = b.time;
  out << fmt::format("Best: {}, micro-batch {}, gradient accumulation {}\n",
                     describe(b.config.methods),
                     b.config.micro_batch_size,
                     b.config.grad_acc_steps);
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
  out << interconnect_line(b, gpu);
  out << fmt::format("  throughput     {}\n", throughput(b, model));
  std::string ratio;
  if (b.gpu_days_ratio > 0) {
    ratio = fmt::format(
        " ({:.2f}x the original {:g} GPU-days)", b.gpu_days_ratio, model.reported_gpu_days());
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
        "({:+.0f}% to {:+.0f}% of the time{}; `gpudays validate`)\n",
        b.error_band->basis,
        100 * b.error_band->low_error,
        100 * b.error_band->high_error,
        b.error_band->widened ? ", widened to contain the estimate" : "");
    if (!b.error_band->far.empty())
      out << fmt::format("                 wider, far from the published cases: {}\n",
                         b.error_band->far_summary());
  }
  out << fmt::format(
      "  utilisation    MFU {:.1f}%, HFU {:.1f}% of the {} peak (matmul ceiling "
      "{:.1f}%)\n",
      100 * b.mfu,
      100 * b.hfu,
      b.matmul_dtype,
      100 * b.matmul_ceiling_fraction);
  if (b.layer_time_s > 0.0) {
    // ConvNeXt's blocks differ by stage: the time is its first stage's block.
    const bool stages = model.family == Family::kConvnext;
    const bool host = gpu.kind == DeviceKind::kCpu;
    out << fmt::format(
        "  {}      {} forward and backward{} at micro-batch {}, {} (what timing one {} checks)\n",
        stages ? "one block" : "one layer",
        format_duration_s(b.layer_time_s),
        stages ? " of a first-stage block" : "",
        b.config.micro_batch_size,
        host ? "the CPU's operations and their dispatch" : "the GPU's kernels alone",
        host ? "on this CPU" : "on the GPU");
  }
  if (b.input.applies) {
    const InputBound& in = b.input;
    out << (b.input_bound
                ? fmt::format(
                      "  input          input-bound: the host's loader delivers {:.0f} images/s "
                      "per GPU, a step takes {:.3f} s where the GPU needs {:.3f} s\n",
                      in.images_per_s,
                      in.step_time_s,
                      in.device_step_time_s)
                : fmt::format(
                      "  input          the host's loader delivers {:.0f} images/s per GPU, "
                      "busy {:.1f}% of a step\n",
                      in.images_per_s,
                      100.0 * in.step_time_s / in.device_step_time_s));
  }
  out << fmt::format("  memory/GPU     {}{} of {}{}: {}\n",
                     format_gib(b.peak_memory_bytes()),
                     memory_range(b.memory),
                     format_gib(static_cast<double>(gpu.memory_bytes)),
                     b.memory.allocator_at_limit
                         ? " (the allocator's cache fills the card; " +
                               format_gib(b.memory.least_bytes()) + " at the least)"
                         : std::string(),
                     memory_line(b.memory));
  print_evidence(out, b, evidence);
  if (b.memory.host_bytes > 0) {
    out << fmt::format("  host memory    {} pinned per node of {}\n",
                       format_gib(b.memory.host_bytes),
                       describe_host_limit(result));
  }
}

}  // namespace gpudays
