// Progress lines and the metrics file.
#include "trainer/train_log.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "common/json_text.h"
#include "common/output_files.h"
#include "common/units.h"

namespace gpudays {

nlohmann::json to_json(const StepMetrics& m) {
  nlohmann::json j = {{"step", m.step},
                      {"loss", m.loss},
                      {"lr", m.lr},
                      {"grad_norm", m.grad_norm},
                      {"applied", m.applied},
                      {"step_time_s", m.step_time_s},
                      {"tokens_per_s", m.tokens_per_s},
                      {"mfu", m.mfu}};
  if (m.eval_loss) j["eval_loss"] = *m.eval_loss;
  return j;
}

std::string throughput_line(double tokens_per_s, std::optional<double> bench_tokens_per_s) {
  std::string line = fmt::format(
      "throughput {} tokens/s (median after {} steps)", format_si(tokens_per_s), kTrainWarmupSteps);
  if (!bench_tokens_per_s) return line + "; no benchmark trial of this configuration to compare";
  return line +
         fmt::format("; the benchmark measured {} tokens/s for this configuration ({:+.1f}%)",
                     format_si(*bench_tokens_per_s),
                     100.0 * (tokens_per_s / *bench_tokens_per_s - 1.0));
}

std::string progress_line(const StepMetrics& m, int64_t total_steps) {
  const double eta_days = static_cast<double>(total_steps - m.step) * m.step_time_s / 86400.0;
  std::string line = fmt::format("step {}/{}  loss {:.4f}", m.step, total_steps, m.loss);
  if (m.eval_loss) line += fmt::format("  eval {:.4f}", *m.eval_loss);
  line += fmt::format("  lr {:.2e}  {:.1f}k tok/s  MFU {:.1f}%  ETA {:.2f} days",
                      m.lr,
                      m.tokens_per_s / 1000.0,
                      100.0 * m.mfu,
                      eta_days);
  if (!m.applied) line += "  (skipped: fp16 overflow)";
  return line;
}

namespace {

// Reads the lines of a regular file only: a device such as /dev/full or /dev/zero never ends.
std::ifstream open_if_regular(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  return std::ifstream(path);
}

}  // namespace

MetricsLog::MetricsLog(std::string path, int64_t resume_step) : path_(std::move(path)) {
  std::vector<std::string> kept;
  std::ifstream in = open_if_regular(path_);
  for (std::string line; std::getline(in, line);) {
    try {
      const std::optional<int64_t> step = json_int64(nlohmann::json::parse(line).at("step"));
      if (step && *step <= resume_step) kept.push_back(line);
    } catch (const nlohmann::json::exception&) {
      // a line cut short by a kill: dropped
    }
  }
  in.close();
  std::string text;
  for (const std::string& line : kept) text += line + "\n";
  write_file_atomically(path_, text);
  out_.open(path_, std::ios::app);
  if (!out_) throw IoError(fmt::format("{}: cannot open for appending", path_));
}

void MetricsLog::append(const StepMetrics& m) {
  out_ << json_text(to_json(m)) << "\n";
  out_.flush();
  if (!out_) throw IoError(fmt::format("{}: write failed", path_));
}

int64_t last_logged_step(const std::string& metrics_path) {
  std::ifstream in = open_if_regular(metrics_path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  const nlohmann::json j = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("step")) return 0;
  return json_int64(j.at("step")).value_or(0);
}

}  // namespace gpudays
