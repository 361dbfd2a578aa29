// The paper's figures as tables and CSV files: the memory-saving comparison and relative
// training speed (bars: mean, 95% interval, cells), the memory-saving gain over free-lunch per
// cell, and the training FLOPs of each original recipe.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "catalog/param_count.h"
#include "plan/workload.h"
#include "report/paper_figures.h"
#include "report/report_tables_paper.h"

namespace gpudays {
namespace {

std::string number(double v) {
  return fmt::format("{:.6g}", v);
}

std::string optional_number(const std::optional<double>& v) {
  return v ? number(*v) : "";
}

std::vector<std::string> bar_row(const std::string& label, const std::optional<MeanInterval>& m) {
  if (!m) return {label, kNothingFits, kNothingFits, "0"};
  return {label,
          fmt::format("{:.2f}x", m->mean),
          fmt::format("{:.2f}-{:.2f}", m->low, m->high),
          std::to_string(m->count)};
}

// A table of averaged bars: one row per statistic with its mean, 95% interval and cells.
DocTable bars_table(std::string name,
                    const std::string& what,
                    const std::vector<std::pair<std::string, std::optional<MeanInterval>>>& bars,
                    std::string caption) {
  DocTable t;
  t.name = std::move(name);
  t.headers = {"statistic", what, "95% confidence interval of the mean", "cells"};
  for (const auto& [label, value] : bars) t.rows.push_back(bar_row(label, value));
  t.caption = std::move(caption);
  return t;
}

// The training samples of a recipe: global batch x steps.
double recipe_samples(const ModelSpec& m) {
  return static_cast<double>(m.recipe.global_batch) * static_cast<double>(m.recipe.train_steps);
}

}  // namespace

DocTable paper_memory_saving_table(const ReportData& data) {
  const MemorySavingBars bars = memory_saving_bars(data);
  return bars_table(
      "memory_saving_paper",
      "mean speed-up over the worst",
      {{"optimal", bars.optimal},
       {"median", bars.median},
       {"worst", bars.worst},
       {"free lunch", bars.free_lunch}},
      "The paper's statistic (its Fig. 'Comparing Memory-Saving Methods'): in each cell (model, "
      "GPU type, count above 1) the days of every free-lunch configuration with checkpointing, "
      "sharding or offloading that fits, divided into the days of the slowest of them: the "
      "fastest (optimal), the median and the slowest (worst = 1), and the free-lunch-only "
      "configuration (free lunch; cells where it fits). Mean over the cells, with Student's t "
      "95% interval. Predicted: the planner's fastest row of each method set. Per cell: "
      "memory_saving_paper.csv.");
}

DocTable paper_relative_speed_table(const ReportData& data) {
  const RelativeSpeedBars bars = relative_speed_bars(data);
  return bars_table(
      "relative_speed_paper",
      "mean speed relative to naive",
      {{"analytic", bars.analytic}, {"naive", bars.naive}, {"optimal", bars.optimal}},
      "The paper's relative training speed (its Fig. 'Relative Training Speed', naive = 1): in "
      "each cell (model, GPU type, count) where all three exist, naive days divided by the days "
      "of the analytic estimate (recipe model FLOPs / (GPUs x dense peak of the recipe's dtype)), "
      "of naive and of the optimal configuration (preset all). Mean over the cells, with "
      "Student's t 95% interval. Predicted (planner best rows). Per cell: "
      "relative_speed_paper.csv.");
}

DocTable free_lunch_gain_table(const ReportData& data) {
  DocTable t;
  t.name = "memory_saving_gain";
  t.headers = {"model"};
  for (const GpuSpec* g : data.gpus) {
    for (int64_t n : data.counts) t.headers.push_back(fmt::format("{}\nx{}", g->name, n));
  }
  for (size_t i = 0; i < data.models.size(); ++i) {
    std::vector<std::string> row = {data.models[i]->name};
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      for (int64_t n : data.counts) {
        const std::optional<double> gain = free_lunch_gain(tier_detail(data, i, j, n).methods);
        row.push_back(gain ? percent_text(*gain) : kNothingFits);
      }
    }
    t.rows.push_back(std::move(row));
  }
  t.caption = fmt::format(
      "The paper's heat-map value: (free-lunch-only days - days of the fastest free-lunch "
      "configuration with a memory-saving method) / free-lunch-only days; negative where "
      "memory-saving is slower. {}: free-lunch-only or every memory-saving configuration does not "
      "fit. Predicted (planner rows). Raw values: memory_saving_gain.csv.",
      kNothingFits);
  return t;
}

DocTable training_flops_table(const ReportData& data) {
  DocTable t;
  t.name = "training_flops";
  t.headers = {"model", "parameters", "FLOPs per sample", "samples", "training FLOPs"};
  for (const ModelSpec* m : data.models) {
    t.rows.push_back({m->name,
                      fmt::format("{:.3g}", static_cast<double>(count_params(*m).total)),
                      fmt::format("{:.3g}", training_flops_per_sample(*m)),
                      fmt::format("{:.3g}", recipe_samples(*m)),
                      fmt::format("{:.1e}", training_flops_per_sample(*m) * recipe_samples(*m))});
  }
  t.caption =
      "Training FLOPs of each original recipe: model FLOPs per sample (forward and backward, "
      "3 x the forward pass; matmuls, attention counted whole, convolutions, scan; the planner's "
      "count, plan/workload.h) x global batch x steps, printed with one decimal as the paper's "
      "table prints them. A sample is a sequence (language models) or an image. Raw values: "
      "training_flops.csv.";
  return t;
}

std::string paper_memory_saving_csv(const ReportData& data) {
  std::string out =
      "model,gpu,gpu_count,memory_saving_configurations,optimal_days,median_days,worst_days,"
      "free_lunch_days,optimal_speedup,median_speedup,free_lunch_speedup,source\n";
  for (const TierDetail& d : data.details) {
    const std::vector<double> days = memory_saving_days(d.methods);
    const std::optional<double> free_lunch = free_lunch_only_days(d.methods);
    const auto s = memory_saving_speedups(days, free_lunch);
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},predicted (planner rows of preset all)\n",
                       csv_field(d.model),
                       csv_field(d.gpu),
                       d.layout.world_size(),
                       days.size(),
                       s ? number(*std::min_element(days.begin(), days.end())) : "",
                       s ? number(median(days)) : "",
                       s ? number(*std::max_element(days.begin(), days.end())) : "",
                       optional_number(free_lunch),
                       s ? number(s->optimal) : "",
                       s ? number(s->median) : "",
                       s ? optional_number(s->free_lunch) : "");
  }
  return out;
}

std::string paper_relative_speed_csv(const ReportData& data) {
  std::string out =
      "model,gpu,gpu_count,analytic_days,naive_days,optimal_days,analytic_speed,"
      "optimal_speed,source\n";
  for (const TierDetail& d : data.details) {
    const double analytic = analytic_days(d);
    const TrainingTime& naive = d.tiers[0];
    const TrainingTime& optimal = d.tiers[kReportTierCount - 1];
    const bool all = analytic > 0.0 && naive.fits && optimal.fits;
    out += fmt::format("{},{},{},{},{},{},{},{},predicted (planner best rows of each preset)\n",
                       csv_field(d.model),
                       csv_field(d.gpu),
                       d.layout.world_size(),
                       analytic > 0.0 ? number(analytic) : "",
                       naive.fits ? number(naive.training_days) : "",
                       optimal.fits ? number(optimal.training_days) : "",
                       all ? number(naive.training_days / analytic) : "",
                       all ? number(naive.training_days / optimal.training_days) : "");
  }
  return out;
}

std::string free_lunch_gain_csv(const ReportData& data) {
  std::string out = "model,gpu,gpu_count,free_lunch_days,memory_saving_days,gain,source\n";
  for (const TierDetail& d : data.details) {
    const std::vector<double> days = memory_saving_days(d.methods);
    const std::optional<double> fastest =
        days.empty() ? std::nullopt
                     : std::optional<double>(*std::min_element(days.begin(), days.end()));
    out += fmt::format("{},{},{},{},{},{},predicted (planner rows of preset all)\n",
                       csv_field(d.model),
                       csv_field(d.gpu),
                       d.layout.world_size(),
                       optional_number(free_lunch_only_days(d.methods)),
                       optional_number(fastest),
                       optional_number(free_lunch_gain(d.methods)));
  }
  return out;
}

std::string training_flops_csv(const ReportData& data) {
  std::string out =
      "model,parameters,training_flops_per_sample,global_batch,train_steps,training_flops\n";
  for (const ModelSpec* m : data.models) {
    out += fmt::format("{},{},{},{},{},{}\n",
                       csv_field(m->name),
                       count_params(*m).total,
                       number(training_flops_per_sample(*m)),
                       m->recipe.global_batch,
                       m->recipe.train_steps,
                       number(training_flops_per_sample(*m) * recipe_samples(*m)));
  }
  return out;
}

}  // namespace gpudays
