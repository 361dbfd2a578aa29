// What a training run reports: a progress line on standard error (step, loss, tokens/s, MFU, ETA)
// and one JSON object per step in OUT/metrics.jsonl. Torch-free; the figures come from the loop
// (trainer/trainer.cpp).
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace gpudays {

struct StepMetrics {
  int64_t step = 0;  // optimizer steps done (1 after the first)
  double loss = 0.0;
  double lr = 0.0;
  double grad_norm = 0.0;
  bool applied = true;  // false: an fp16 overflow skipped the update
  double step_time_s = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;  // model FLOPs per second / the device's peak
  std::optional<double> eval_loss;
};

nlohmann::json to_json(const StepMetrics& m);

// "step 120/1000  loss 3.2141  eval 3.3012  lr 1.0e-03  41.2k tok/s  MFU 12.3%  ETA 0.02 days"
std::string progress_line(const StepMetrics& m, int64_t total_steps);

// Steps left out of a run's median step time: start-up, and a CUDA graph's warm-up and capture.
constexpr int64_t kTrainWarmupSteps = 3;

// The run's throughput beside the benchmark's for the same configuration (`bench_tokens_per_s`:
// the trial's, none when the results hold no successful trial of it):
// "throughput 832 tokens/s (median after 3 steps); the benchmark measured 816 tokens/s for this
// configuration (+1.9%)".
std::string throughput_line(double tokens_per_s, std::optional<double> bench_tokens_per_s);

// The last step OUT/metrics.jsonl logged; 0 before the first or without the file.
int64_t last_logged_step(const std::string& metrics_path);

// OUT/metrics.jsonl, appended to; opened for a resumed run, it first drops the lines of steps
// after `resume_step` (written after the checkpoint the run resumes from).
class MetricsLog {
 public:
  MetricsLog(std::string path, int64_t resume_step);
  void append(const StepMetrics& m);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace gpudays
