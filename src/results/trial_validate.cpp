// Validation of a stored trial row: what a trial can physically have measured. A row that fails is
// never used (results_db.cpp skips it with one warning).
#include <cmath>

#include <fmt/format.h>

#include "results/trial_record.h"

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

std::string timing_problem(const TrialMeasurement& m) {
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
  return "";
}

constexpr double kMaxCountedUtilisation = 2.0;

std::string derived_problem(const TrialRecord& t) {
  for (double v :
       {t.samples_per_s, t.tokens_per_s, t.training_days, t.gpu_days, t.predicted_step_time_s}) {
    if (!finite_at_least(v, 0.0)) return fmt::format("a derived figure of {}", v);
  }
  // MFU and HFU count attention in full (PaLM's formula) while causal kernels execute half of its
  // score and value products; the executed FLOPs are at least half the counted ones, and never
  // above the peak (the sweep checks them against the matmul ceiling), so neither reaches 2. Small
  // attention-heavy models on a CPU do pass 1.
  if (!finite_at_least(t.mfu, 0.0) || t.mfu >= kMaxCountedUtilisation ||
      !finite_at_least(t.hfu, 0.0) || t.hfu >= kMaxCountedUtilisation) {
    return fmt::format("MFU {} / HFU {} not in [0, {})", t.mfu, t.hfu, kMaxCountedUtilisation);
  }
  if (t.predicted_memory_bytes < 0) return "negative predicted memory";
  return "";
}

}  // namespace

std::string row_problem(const TrialRecord& t) {
  std::string problem = identity_problem(t);
  if (problem.empty() && t.ok()) problem = timing_problem(t.measured);
  if (problem.empty()) problem = derived_problem(t);
  return problem;
}

}  // namespace gpudays
