// The trial row's columns: identity, configuration, measurement, derived figures, provenance.
#include "rows/trial_rows.h"

#include <fmt/format.h>

#include "rows/method_columns.h"

namespace gpudays {
namespace {

using D = Display;
using R = TrialRecord;

// A column read from one field of the record: FIELD_COLUMN("mfu", mfu, D::kPercent).
#define FIELD_COLUMN(name, path, ...)                          \
  Column<R> {                                                  \
    name, [](const R& r) { return Cell{r.path}; }, __VA_ARGS__ \
  }

// Every column but the method fields', which follow "methods".
std::vector<Column<R>> columns_but_methods() {
  return {
      FIELD_COLUMN("model", model, D::kPlain),
      FIELD_COLUMN("model_digest", model_digest),
      FIELD_COLUMN("gpu", gpu, D::kPlain),
      FIELD_COLUMN("device_name", measured.device_name),
      FIELD_COLUMN("num_nodes", cluster.num_nodes, D::kPlain),
      FIELD_COLUMN("gpus_per_node", cluster.gpus_per_node, D::kPlain),
      {"methods", [](const R& r) { return Cell{describe(r.config.methods)}; }, D::kPlain},
      FIELD_COLUMN("micro_batch_size", config.micro_batch_size, D::kPlain),
      FIELD_COLUMN("grad_acc_steps", config.grad_acc_steps, D::kPlain),
      {"memory_limit_bytes",
       [](const R& r) { return r.memory_limit_bytes > 0 ? Cell{r.memory_limit_bytes} : Cell{}; }},
      {"rule", [](const R& r) { return Cell{to_string(r.rule)}; }, D::kPlain},
      {"status", [](const R& r) { return Cell{to_string(r.measured.status)}; }, D::kPlain},
      FIELD_COLUMN("message", measured.message),
      {"timing", [](const R& r) { return Cell{to_string(r.measured.timing)}; }},
      FIELD_COLUMN("steps_timed", measured.steps_timed),
      FIELD_COLUMN("step_time_median_s", measured.step_time_median_s, D::kFixed3),
      FIELD_COLUMN("step_time_min_s", measured.step_time_min_s),
      FIELD_COLUMN("step_time_max_s", measured.step_time_max_s),
      FIELD_COLUMN("micro_step_time_s", measured.micro_step_time_s),
      FIELD_COLUMN("last_micro_step_time_s", measured.last_micro_step_time_s),
      FIELD_COLUMN("optimizer_time_s", measured.optimizer_time_s),
      FIELD_COLUMN("check_step_time_s", measured.check_step_time_s),
      FIELD_COLUMN("timing_check", measured.timing_check),
      FIELD_COLUMN("peak_memory_bytes", measured.peak_memory_bytes, D::kGib),
      FIELD_COLUMN("peak_reserved_bytes", measured.peak_reserved_bytes),
      FIELD_COLUMN("cuda_graph", measured.cuda_graph),
      FIELD_COLUMN("scan", measured.scan),
      FIELD_COLUMN("samples_per_s", samples_per_s),
      FIELD_COLUMN("tokens_per_s", tokens_per_s),
      FIELD_COLUMN("mfu", mfu, D::kPercent),
      FIELD_COLUMN("hfu", hfu),
      FIELD_COLUMN("training_days", training_days, D::kDays),
      FIELD_COLUMN("gpu_days", gpu_days, D::kDays),
      FIELD_COLUMN("predicted_step_time_s", predicted_step_time_s, D::kFixed3),
      FIELD_COLUMN("predicted_memory_bytes", predicted_memory_bytes),
      FIELD_COLUMN("gpudays_version", gpudays_version),
      FIELD_COLUMN("git_commit", git_commit),
      FIELD_COLUMN("torch_version", measured.torch_version),
      FIELD_COLUMN("driver", measured.driver),
      FIELD_COLUMN("hostname", hostname),
      FIELD_COLUMN("created_at", created_at),
  };
}

}  // namespace

const std::vector<Column<TrialRecord>>& trial_row_columns() {
  static const std::vector<Column<R>> kColumns = with_method_columns<R>(
      columns_but_methods(), "methods", [](const R& r) -> auto& { return r.config.methods; });
  return kColumns;
}

#undef FIELD_COLUMN

}  // namespace gpudays
