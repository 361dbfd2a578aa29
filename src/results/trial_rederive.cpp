// Re-derivation of a stored trial's figures from its step time (results/trial_rederive.h).
#include "results/trial_rederive.h"

#include <cmath>

#include <fmt/format.h>

#include "catalog/host_cpu.h"
#include "common/checked_math.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/planner.h"

namespace gpudays {
namespace {

// The host CPU as a device for the planner's StepWork: the FLOPs depend on its kind alone, never
// on its figures, which are nominal here (the row does not keep the host's measurement).
GpuSpec stored_host_cpu(const TrialRecord& t) {
  HostMeasurement nominal;
  nominal.device_name = "the host CPU of a stored trial";
  nominal.threads = 1;
  nominal.matmul_fp32_tflops = nominal.matmul_bf16_tflops = 1.0;
  nominal.memory_bandwidth_gb_per_s = 1.0;
  nominal.memory_bytes = kMaxHostMemoryBytes;
  GpuSpec host =
      host_cpu_spec(nominal, {/*memory_limit_bytes=*/0, /*ranks=*/t.cluster.gpus_per_node});
  host.peak_fp16_tflops = 1.0;  // a trial may have run an fp16 recipe on a host probed for it
  return host;
}

bool agree(double stored, double derived) {
  return std::abs(stored - derived) <= kFigureTolerance * std::abs(derived);
}

std::string memory_problem(const TrialMeasurement& m, const GpuSpec* gpu) {
  const int64_t capacity = gpu != nullptr ? gpu->memory_bytes : kMaxHostMemoryBytes;
  const std::string device = gpu != nullptr ? gpu->name : "any host CPU";
  for (const int64_t bytes : {m.peak_memory_bytes, m.peak_reserved_bytes}) {
    if (bytes > capacity) {
      return fmt::format("a peak memory of {} above the {} of {}",
                         format_gib(static_cast<double>(bytes)),
                         format_gib(static_cast<double>(capacity)),
                         device);
    }
  }
  return "";
}

// The host CPU's MFU and HFU as stored: zero both (a stand-in CPU, utilisation unknown), or in the
// bound, in the ratio the FLOPs give, and against a peak no CPU exceeds.
std::string host_utilisation_problem(const TrialRecord& t, const StepWork& work) {
  const double rate_per_rank = work.model_flops / (t.step_time_s() * work.gpus);
  const double max_flops = kMaxHostTflops * kTera;
  if (t.mfu == 0.0 && t.hfu == 0.0) {
    if (rate_per_rank <= max_flops) return "";
    return fmt::format("{:.3g} TFLOP/s per rank from a step time of {:.3g} s: faster than any CPU",
                       rate_per_rank / kTera,
                       t.step_time_s());
  }
  if (!(t.mfu > 0.0 && t.mfu <= kMaxHostCpuUtilisation)) {
    return fmt::format(
        "MFU {:.1f}% not in (0, {:.0f}%]", 100 * t.mfu, 100 * kMaxHostCpuUtilisation);
  }
  const double hfu = t.mfu * (work.model_flops + work.recompute_flops) / work.model_flops;
  if (!agree(t.hfu, hfu)) {
    return fmt::format(
        "HFU {:.2f}% where MFU {:.2f}% makes it {:.2f}%", 100 * t.hfu, 100 * t.mfu, 100 * hfu);
  }
  if (rate_per_rank / t.mfu > max_flops) {
    return fmt::format(
        "MFU {:.1f}% at a step time of {:.3g} s means a peak of {:.3g} TFLOP/s: "
        "faster than any CPU",
        100 * t.mfu,
        t.step_time_s(),
        rate_per_rank / t.mfu / kTera);
  }
  return "";
}

std::string gpu_utilisation_problem(const StepFigures& f, const GpuSpec& gpu, double step_s) {
  if (f.mfu <= kMaxGpuUtilisation && f.hfu <= kMaxGpuUtilisation) return "";
  return fmt::format("a step time of {:.3g} s means MFU {:.1f}% / HFU {:.1f}% of the {} peak",
                     step_s,
                     100 * f.mfu,
                     100 * f.hfu,
                     gpu.name);
}

// The first stored figure that disagrees with its derivation, or "".
std::string disagreement(const TrialRecord& t, const StepFigures& f, bool utilisation) {
  struct Figure {
    const char* name;
    double stored;
    double derived;
    bool percent;  // a fraction, printed as a percentage
  };
  const Figure figures[] = {{"samples/s", t.samples_per_s, f.samples_per_s, false},
                            {"tokens/s", t.tokens_per_s, f.tokens_per_s, false},
                            {"training days", t.training_days, f.training_days, false},
                            {"GPU-days", t.gpu_days, f.gpu_days, false},
                            {"MFU", t.mfu, f.mfu, true},
                            {"HFU", t.hfu, f.hfu, true}};
  for (const Figure& x : figures) {
    if ((x.percent && !utilisation) || agree(x.stored, x.derived)) continue;
    const double scale = x.percent ? 100.0 : 1.0;
    const char* unit = x.percent ? "%" : "";
    return fmt::format(
        "stored {} {:.6g}{} where its step time of {:.6g} s makes {:.6g}{} (more "
        "than {:g}% apart)",
        x.name,
        scale * x.stored,
        unit,
        t.step_time_s(),
        scale * x.derived,
        unit,
        100 * kFigureTolerance);
  }
  return "";
}

}  // namespace

StepWork trial_step_work(const TrialRecord& t, const ModelSpec& model, const GpuSpec* gpu) {
  // Checked first: the planner multiplies them.
  const std::optional<int64_t> samples =
      checked_product({t.config.micro_batch_size, t.config.grad_acc_steps, t.cluster.world_size()});
  if (!samples || *samples != model.recipe.global_batch) {
    throw InputError(
        fmt::format("micro-batch {} x accumulation {} x {} ranks is not the global "
                    "batch of {} ({})",
                    t.config.micro_batch_size,
                    t.config.grad_acc_steps,
                    t.cluster.world_size(),
                    model.name,
                    model.recipe.global_batch));
  }
  const GpuSpec host = gpu == nullptr ? stored_host_cpu(t) : GpuSpec{};
  const Cluster cluster{t.cluster, gpu != nullptr ? gpu : &host};
  return plan_configuration(model, cluster, t.config, PlanOptions{}).work;
}

std::string rederive_figures(TrialRecord& t, const ModelSpec& model, const GpuSpec* gpu) {
  if (!t.ok()) return "";
  if (std::string problem = memory_problem(t.measured, gpu); !problem.empty()) return problem;
  StepWork work;
  try {
    work = trial_step_work(t, model, gpu);
  } catch (const InputError& e) {
    return e.what();
  }
  StepFigures derived = step_figures(work, t.step_time_s());
  std::string problem = gpu != nullptr ? gpu_utilisation_problem(derived, *gpu, t.step_time_s())
                                       : host_utilisation_problem(t, work);
  if (!problem.empty()) return problem;
  if (gpu == nullptr) {  // the host's peak is not kept: its utilisation stays as checked above
    derived.mfu = t.mfu;
    derived.hfu = t.hfu;
  }
  problem = disagreement(t, derived, /*utilisation=*/gpu != nullptr);
  if (!problem.empty()) return problem;
  t.samples_per_s = derived.samples_per_s;
  t.tokens_per_s = derived.tokens_per_s;
  t.training_days = derived.training_days;
  t.gpu_days = derived.gpu_days;
  t.mfu = derived.mfu;
  t.hfu = derived.hfu;
  return "";
}

}  // namespace gpudays
