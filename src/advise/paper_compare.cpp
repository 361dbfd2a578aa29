// The paper's published times beside ours, and the utilisation each implies.
#include "advise/paper_compare.h"

#include <algorithm>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "catalog/gpu_peak.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/device_model.h"
#include "plan/workload.h"

namespace gpudays {
namespace {

// Layout of a reported run: whole 8-GPU nodes, or one node of fewer.
ClusterShape reported_layout(int64_t gpus) {
  const int64_t per_node = std::min<int64_t>(gpus, 8);
  return {gpus / per_node, per_node};
}

}  // namespace

std::string published_settings(const Measurement& m) {
  std::vector<std::string> parts;
  if (m.compiled.value_or(false) || m.fused_attention.value_or(false))
    parts.push_back("free-lunch");
  if (!m.sharding.empty()) parts.push_back(m.sharding);
  if (m.offloading) parts.push_back("offloading");
  if (m.activation_checkpointing == "full") {
    parts.push_back("checkpointing");
  } else if (!m.activation_checkpointing.empty() && m.activation_checkpointing != "none") {
    parts.push_back(fmt::format("checkpointing ({})", m.activation_checkpointing));
  }
  if (m.micro_batch_size) parts.push_back(fmt::format("micro-batch {}", *m.micro_batch_size));
  if (m.gradient_accumulation)
    parts.push_back(fmt::format("accumulation {}", *m.gradient_accumulation));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

namespace {

PaperCell make_cell(const ModelSpec& model,
                    const GpuSpec& gpu,
                    const ClusterShape& layout,
                    double days,
                    const TrainingTimeSource& source) {
  PaperCell cell;
  cell.model = model.name;
  cell.gpu = gpu.name;
  cell.layout = layout;
  cell.published_days = days;
  cell.implied = implied_utilisation(model, gpu, layout.world_size(), days);
  if (cell.implied.impossible) cell.verdict = impossible_reason(cell.implied, gpu);
  cell.ours = source.training_time(model, gpu, layout);
  return cell;
}

}  // namespace

std::string to_string(PaperCellKind kind) {
  return kind == PaperCellKind::kBenchmark ? "benchmark" : "original_run";
}

ImpliedUtilisation implied_utilisation(const ModelSpec& model,
                                       const GpuSpec& gpu,
                                       int64_t gpus,
                                       double days) {
  if (gpus < 1 || !(days > 0.0))
    throw InputError(
        fmt::format("{}: a published run needs at least 1 GPU and positive days", model.name));
  ImpliedUtilisation u;
  const double flops_per_sample = training_flops_per_sample(model);
  u.model_flops_per_token = flops_per_sample / static_cast<double>(model.tokens_per_sample());
  u.run_flops = flops_per_sample * static_cast<double>(model.recipe.global_batch) *
                static_cast<double>(model.recipe.train_steps);
  const MatmulPeak peak = matmul_peak(gpu, model.recipe.precision, /*tf32_allowed=*/true);
  u.peak_flops_per_gpu = peak.tflops * kTera;
  u.mfu = u.run_flops / (days * kSecondsPerDay * static_cast<double>(gpus) * u.peak_flops_per_gpu);
  u.matmul_ceiling = peak.ceiling_fraction;
  u.impossible = u.mfu > u.matmul_ceiling;
  return u;
}

std::string impossible_reason(const ImpliedUtilisation& implied, const GpuSpec& gpu) {
  return fmt::format(
      "physically impossible: implies {:.1f}% MFU, above the {} matmul ceiling of {:.1f}% of "
      "peak (the reference timer reads the host clock without synchronising the GPU)",
      100.0 * implied.mfu,
      gpu.name,
      100.0 * implied.matmul_ceiling);
}

std::vector<PaperCell> compare_with_paper(const Catalog& catalog,
                                          const std::vector<MeasurementFile>& measurements,
                                          const TrainingTimeSource& source) {
  const auto file = std::find_if(measurements.begin(), measurements.end(), [](const auto& f) {
    return f.source.id == kPaperSourceId;
  });
  if (file == measurements.end())
    throw InputError(fmt::format("no measurement file with source id '{}' in {}/measurements",
                                 kPaperSourceId,
                                 catalog.config_dir()));
  std::vector<PaperCell> cells;
  for (const Measurement& m : file->cases) {
    if (!m.published.train_time_days || !m.model_from_catalog) continue;
    const ClusterShape layout{m.nodes, m.gpus_per_node};
    PaperCell cell = make_cell(catalog.model(m.model_name),
                               catalog.gpu(m.gpu),
                               layout,
                               *m.published.train_time_days,
                               source);
    cell.name = m.name;
    cell.citation = file->source.title + ": " + m.citation;
    cell.published_settings = published_settings(m);
    cells.push_back(std::move(cell));
  }
  for (const ModelSpec& model : catalog.models()) {
    if (!model.reported || model.reported->gpu.empty()) continue;
    const GpuSpec* gpu = catalog.find_gpu(model.reported->gpu);
    if (gpu == nullptr) continue;
    PaperCell cell =
        make_cell(model, *gpu, reported_layout(model.reported->gpus), model.reported->days, source);
    cell.kind = PaperCellKind::kOriginalRun;
    cell.name = model.name + "-original";
    cell.citation = model.reported->source;
    cells.push_back(std::move(cell));
  }
  return cells;
}

std::vector<PaperCell> compare_with_paper(const Catalog& catalog,
                                          const TrainingTimeSource& source) {
  return compare_with_paper(catalog, load_measurements(catalog), source);
}

}  // namespace gpudays
