// Validation of a stored trial row: what a trial can physically have measured. A row that fails is
// never used (results_db.cpp skips it with one warning).
#include <cmath>

#include <fmt/format.h>

#include "catalog/host_cpu.h"
#include "results/trial_record.h"
#include "results/trial_rederive.h"

namespace gpudays {
namespace {

bool finite_at_least(double v, double low) {
  return std::isfinite(v) && v >= low;
}

std::string identity_problem(const TrialRecord& t) {
  if (t.model.empty() || t.gpu.empty()) return "no model or GPU";
  if (t.cluster.num_nodes < 1 || t.cluster.gpus_per_node < 1 || t.cluster.num_nodes > 1 << 20 ||
      t.cluster.gpus_per_node > 1 << 20) {
    return fmt::format(
        "cluster {} x {} out of range", t.cluster.num_nodes, t.cluster.gpus_per_node);
  }
  if (t.config.micro_batch_size < 1 || t.config.grad_acc_steps < 1 ||
      t.config.micro_batch_size > int64_t{1} << 40 || t.config.grad_acc_steps > int64_t{1} << 40) {
    return fmt::format("micro-batch {} x accumulation {} out of range",
                       t.config.micro_batch_size,
                       t.config.grad_acc_steps);
  }
  if (t.memory_limit_bytes < 0) return "negative memory limit";
  return "";
}

// How far a parts-timed row's step time may be from what its parts compose to. The trial stores
// the composition itself (sweep/step_timing.h), but each figure is the slowest rank's on its own
// (trial/trial_runner.cpp: take_slowest_rank), so parts of different ranks can sum to more than
// the slowest rank's composed step; 25% covers that imbalance and is far below the 5x of a row
// whose parts were not measured in the step it claims (parts summing to 39 s for a 7.49 s step).
constexpr double kPartsCompositionTolerance = 0.25;

// What a row's parts compose to: (acc - 1) x micro + last + optimizer, or under the reference's
// timing acc x the (last, only) micro-step + optimizer.
double composed_s(const TrialMeasurement& m, int64_t grad_acc_steps) {
  const double acc = static_cast<double>(grad_acc_steps);
  if (m.timing == StepTiming::kReference) {
    return acc * m.last_micro_step_time_s + m.optimizer_time_s;
  }
  return (acc - 1) * m.micro_step_time_s + m.last_micro_step_time_s + m.optimizer_time_s;
}

std::string composition_problem(const TrialMeasurement& m, int64_t grad_acc_steps) {
  if (m.timing == StepTiming::kWhole) return "";
  // A failed composition check keeps the whole steps as the step time: those must match instead.
  const bool whole = m.timing_check == "disagrees";
  const double expected = whole ? m.check_step_time_s : composed_s(m, grad_acc_steps);
  if (std::abs(expected - m.step_time_median_s) <=
      kPartsCompositionTolerance * m.step_time_median_s) {
    return "";
  }
  return fmt::format("{} {:.3g} s against a step time of {:.3g} s (more than {:.0f}% apart)",
                     whole ? "whole steps of" : "parts composing to",
                     expected,
                     m.step_time_median_s,
                     100 * kPartsCompositionTolerance);
}

std::string timing_problem(const TrialMeasurement& m, int64_t grad_acc_steps) {
  if (m.steps_timed < 1) return fmt::format("{} steps timed", m.steps_timed);
  if (!finite_at_least(m.step_time_min_s, 0.0) || m.step_time_min_s <= 0.0 ||
      !(m.step_time_min_s <= m.step_time_median_s && m.step_time_median_s <= m.step_time_max_s) ||
      !std::isfinite(m.step_time_max_s)) {
    return fmt::format("step times min {} / median {} / max {} s are not 0 < min <= median <= max",
                       m.step_time_min_s,
                       m.step_time_median_s,
                       m.step_time_max_s);
  }
  for (double part :
       {m.micro_step_time_s, m.last_micro_step_time_s, m.optimizer_time_s, m.check_step_time_s}) {
    if (!finite_at_least(part, 0.0)) return fmt::format("a step part of {} s", part);
  }
  if (m.peak_memory_bytes < 0) return "negative peak memory";
  if (m.peak_reserved_bytes < 0) return "negative peak reserved memory";
  if (m.peak_reserved_bytes > 0 && m.peak_reserved_bytes < m.peak_memory_bytes) {
    return "peak reserved memory below the peak allocated";
  }
  return composition_problem(m, grad_acc_steps);
}

// MFU and HFU count a step's FLOPs as PaLM does, attention in full, over the device's peak. What
// can reach the peak is the FLOPs the kernels execute, and the sweep stores a trial only when
// those stay under the device's matmul ceiling (sweep/sweep.cpp; at most 1.2 of a datasheet peak,
// the GPU loader's bound: the RTX 3090's measured GEMM passes its rated peak by 8%, and 1.0 of
// the host CPU's measured matmul). The counted FLOPs exceed the executed
// ones only by causal attention's half-executed score and value products: on catalog models at
// their sequence lengths by at most 17% (pythia-14m at 2048 tokens: attention is most of its
// layers' FLOPs). So a GPU's rows may count up to 1.2 x 1.17 (1.4) of its peak, and the host
// CPU's, whose ceiling is its measured matmul itself, 1.17 (1.2). (A model file narrower or
// longer than any catalog model could count more; its rows past the bound are named and ignored.)
// The bounds are kMaxGpuUtilisation and kMaxHostCpuUtilisation (trial_rederive.h).

std::string derived_problem(const TrialRecord& t) {
  for (double v :
       {t.samples_per_s, t.tokens_per_s, t.training_days, t.gpu_days, t.predicted_step_time_s}) {
    if (!finite_at_least(v, 0.0)) return fmt::format("a derived figure of {}", v);
  }
  const double max = is_host_cpu_name(t.gpu) ? kMaxHostCpuUtilisation : kMaxGpuUtilisation;
  if (!finite_at_least(t.mfu, 0.0) || t.mfu > max || !finite_at_least(t.hfu, 0.0) || t.hfu > max) {
    return fmt::format(
        "MFU {:.1f}% / HFU {:.1f}% not in [0, {:.0f}%]", 100 * t.mfu, 100 * t.hfu, 100 * max);
  }
  if (t.predicted_memory_bytes < 0) return "negative predicted memory";
  return "";
}

}  // namespace

std::string row_problem(const TrialRecord& t) {
  std::string problem = identity_problem(t);
  if (problem.empty() && t.ok()) problem = timing_problem(t.measured, t.config.grad_acc_steps);
  if (problem.empty()) problem = derived_problem(t);
  return problem;
}

}  // namespace gpudays
