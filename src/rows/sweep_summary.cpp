// The sweep's summary.
#include "rows/sweep_summary.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "common/units.h"
#include "rows/row_format.h"

namespace gpudays {

void print_sweep_summary(std::ostream& out,
                         bool json,
                         const std::string& db,
                         const ModelSpec& model,
                         const SweepSummary& s) {
  const auto& best = s.search.best;
  if (json) {
    nlohmann::json j = json_document(/*row_kind=*/"");
    j.update({{"trials_run", s.trials_run},
              {"trials_reused", s.trials_reused},
              {"method_sets", s.search.method_sets_total},
              {"method_sets_skipped", s.search.method_sets_skipped},
              {"method_sets_pruned", s.search.method_sets_pruned},
              {"rule", to_string(s.rule)},
              {"best", nullptr}});
    if (best) {
      j["best"] = {
          {"methods", describe(best->request.methods)},
          {"micro_batch_size", best->request.micro_batch_size},
          {"grad_acc_steps", best->request.grad_acc_steps},
          {"step_time_s", best->outcome.step_time_s},
          {"training_days", model.recipe.train_steps * best->outcome.step_time_s / kSecondsPerDay}};
    }
    out << json_text(j, 2) << "\n";
    return;
  }
  out << fmt::format(
      "{} trials run, {} reused from {}; {} of {} method sets skipped by the "
      "planner, {} pruned by its bound\n",
      s.trials_run,
      s.trials_reused,
      db,
      s.search.method_sets_skipped,
      s.search.method_sets_total,
      s.search.method_sets_pruned);
  if (!best) {
    out << "No configuration ran successfully.\n";
    return;
  }
  out << fmt::format(
      "Best{}: {}, micro-batch {}, accumulation {}: {:.3f} s per step; {} for "
      "{} steps\n",
      s.rule == MeasurementRule::kReference ? " (the reference's rule)" : "",
      describe(best->request.methods),
      best->request.micro_batch_size,
      best->request.grad_acc_steps,
      best->outcome.step_time_s,
      format_duration_s(model.recipe.train_steps * best->outcome.step_time_s),
      format_count(model.recipe.train_steps));
}

}  // namespace gpudays
