// The paper's tables and their CSV files, from the report's planner rows, the results database's
// trials and the cost rows; the caption of each says where its cells came from.
#include "report/report_tables_paper.h"

#include <fmt/format.h>

#include "cost/cost_format.h"
#include "report/paper_statistics.h"

namespace gpudays {
namespace {

constexpr size_t kNaive = 0;
constexpr size_t kAll = kReportTierCount - 1;

std::string number(double v) {
  return fmt::format("{:.6g}", v);
}

std::vector<std::string> model_by_option_headers(const ReportData& data) {
  std::vector<std::string> h = {"model"};
  for (const GpuSpec* g : data.gpus) {
    for (int64_t n : data.counts) h.push_back(fmt::format("{}\nx{}", g->name, n));
  }
  return h;
}

const CostRow* cost_row(const ReportData& data, size_t model, const GpuSpec* gpu, int64_t n) {
  for (const CostRow& r : data.costs[model].rows) {
    if (r.gpu == gpu->name && r.layout.world_size() == n) return &r;
  }
  return nullptr;
}

// Mean of analytic days / tier days over the cells of `gpu` (every GPU when null) where both
// exist; nullopt when none does. `count` gets the number of cells.
std::optional<double> mean_relative_speed(const ReportData& data,
                                          const GpuSpec* gpu,
                                          size_t tier,
                                          int& count) {
  double sum = 0.0;
  count = 0;
  for (const TierDetail& d : data.details) {
    if (gpu != nullptr && d.gpu != gpu->name) continue;
    const double analytic = analytic_days(d);
    if (analytic <= 0.0 || !d.tiers[tier].fits) continue;
    sum += analytic / d.tiers[tier].training_days;
    ++count;
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

}  // namespace

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string days_text(double days, DaysRounding rounding) {
  if (rounding == DaysRounding::kWholeDays) return fmt::format("{:.0f}", whole_days(days));
  return fmt::format("{:.1f}", days);
}

std::string predicted_days_cell(const TrainingTime& t, DaysRounding rounding) {
  if (!t.fits) return kNothingFits;
  if (!t.training_days_range) return days_text(t.training_days, rounding);
  return fmt::format("{}\n({}-{})",
                     days_text(t.training_days, rounding),
                     days_text(t.training_days_range->low, rounding),
                     days_text(t.training_days_range->high, rounding));
}

double analytic_days(const TierDetail& detail) {
  const TrainingTime& all = detail.tiers[kAll];
  return all.fits ? all.training_days * all.mfu : 0.0;
}

DocTable training_days_table(const ReportData& data, DaysTable which, DaysRounding rounding) {
  DocTable t;
  t.name = which == DaysTable::kOptimal ? "training_days_optimal" : "training_days_naive";
  t.headers = model_by_option_headers(data);
  const size_t tier = which == DaysTable::kOptimal ? kAll : kNaive;
  bool any_measured = false;
  for (size_t i = 0; i < data.models.size(); ++i) {
    std::vector<std::string> row = {data.models[i]->name};
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      for (int64_t n : data.counts) {
        const TierDetail& d = tier_detail(data, i, j, n);
        if (which == DaysTable::kOptimal && d.measured) {
          row.push_back(days_text(d.measured->training_days, rounding) + "\nmeasured");
          any_measured = true;
        } else {
          row.push_back(predicted_days_cell(d.tiers[tier], rounding));
        }
      }
    }
    t.rows.push_back(std::move(row));
  }
  t.caption = fmt::format(
      "Training days of the original recipe with {} settings, per model, GPU type and GPU count; "
      "{} where no configuration fits. Predicted: the planner's best row of preset {}, with the "
      "10th-90th percentile range of its error on published measurements in brackets.{}{} "
      "Raw rows with each cell's source: training_days.csv.",
      which == DaysTable::kOptimal ? "optimal" : "naive",
      kNothingFits,
      to_string(kReportTiers[tier]),
      rounding == DaysRounding::kWholeDays
          ? " Days rounded to whole days (halves away from zero), as the paper prints them; a "
            "run under half a day shows 0."
          : "",
      any_measured ? fmt::format(" Cells marked 'measured': the fastest successful trial in {} "
                                 "(its provenance in training_days.csv), not a prediction.",
                                 data.results_path)
                   : std::string());
  return t;
}

DocTable optimal_settings_table(const ReportData& data) {
  DocTable t;
  t.name = "optimal_settings";
  t.headers = {"model", "GPU"};
  for (int64_t n : data.counts) t.headers.push_back(fmt::format("{} GPU{}", n, n == 1 ? "" : "s"));
  for (size_t i = 0; i < data.models.size(); ++i) {
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      std::vector<std::string> row = {data.models[i]->name, data.gpus[j]->name};
      for (int64_t n : data.counts) {
        const TierDetail& d = tier_detail(data, i, j, n);
        if (d.measured) {
          row.push_back(d.measured->settings + "\n(measured)");
        } else {
          row.push_back(d.tiers[kAll].fits ? d.tiers[kAll].settings : kNothingFits);
        }
      }
      t.rows.push_back(std::move(row));
    }
  }
  t.caption = fmt::format(
      "The optimal settings of each cell of the optimal-days table: the planner's best row of "
      "preset all, or, marked '(measured)', the settings of the fastest successful trial; {} "
      "where nothing fits.",
      kNothingFits);
  return t;
}

DocTable memory_methods_table(const ReportData& data) {
  const std::vector<MethodColumn>& columns = memory_saving_columns();
  DocTable t;
  t.name = "memory_methods";
  t.headers = {"model", "GPU", "needs at least"};
  for (const MethodColumn& c : columns) t.headers.push_back(c.label);
  for (const TierDetail& d : data.details) {
    if (d.layout.world_size() != data.detail_gpu_count) continue;
    const MethodComparison& m = d.methods;
    std::vector<std::string> row = {m.model, m.gpu, kNothingFits};
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!m.days[c]) {
        row.push_back(kNothingFits);
        continue;
      }
      if (row[2] == kNothingFits) row[2] = columns[c].label;
      row.push_back(fmt::format("{:.1f} d\n{:.2f}x", *m.days[c], *m.days[c] / *m.best_days));
    }
    t.rows.push_back(std::move(row));
  }
  t.caption = fmt::format(
      "gpudays' definition. Memory-saving methods on {} GPUs (free-lunch on in every column): "
      "training days of the "
      "fastest configuration of each method combination that fits (planner rows of preset all), "
      "and its days relative to the fastest configuration overall (1.00x = the fastest; higher "
      "= slower, the price of the method). 'needs at least': the first column, lightest first, "
      "that fits. {}: no configuration of that combination fits (on one GPU, sharding exists only "
      "with offloading). Raw rows: memory_methods.csv.",
      data.detail_gpu_count,
      kNothingFits);
  return t;
}

DocTable relative_speed_table(const ReportData& data) {
  DocTable t;
  t.name = "relative_speed";
  t.headers = {"method tier"};
  for (const GpuSpec* g : data.gpus) t.headers.push_back(g->name);
  t.headers.push_back("average, every GPU");
  for (size_t tier = 0; tier < kReportTierCount; ++tier) {
    std::vector<std::string> row = {tier_label(kReportTiers[tier])};
    std::vector<const GpuSpec*> gpus(data.gpus.begin(), data.gpus.end());
    gpus.push_back(nullptr);
    for (const GpuSpec* g : gpus) {
      int cells = 0;
      const std::optional<double> mean = mean_relative_speed(data, g, tier, cells);
      row.push_back(mean ? fmt::format("{:.2f}\n({} cells)", *mean, cells) : kNothingFits);
    }
    t.rows.push_back(std::move(row));
  }
  std::vector<std::string> analytic = {"analytic estimate (FLOPs / peak)"};
  for (size_t k = 0; k <= data.gpus.size(); ++k) analytic.push_back("1.00");
  t.rows.push_back(std::move(analytic));
  t.caption =
      "gpudays' definition. Relative training speed: the analytic estimate's days divided by the "
      "tier's predicted "
      "days, averaged (arithmetic mean) over every model and GPU count where the tier fits. The "
      "analytic estimate, as the paper made it, is the recipe's model FLOPs / (GPUs x the GPU's "
      "peak dense FLOP/s for the recipe's dtype) = days x MFU of the planner's best row of preset "
      "all; 1.00 would mean training at peak. Planner rows only. Per cell: relative_speed.csv.";
  return t;
}

DocTable experiment_cost_table(const ReportData& data) {
  DocTable t;
  t.name = "experiment_cost";
  t.headers = {"model", "GPU"};
  for (int64_t n : data.counts) t.headers.push_back(fmt::format("{} GPU{}", n, n == 1 ? "" : "s"));
  for (size_t i = 0; i < data.models.size(); ++i) {
    for (const GpuSpec* g : data.gpus) {
      std::vector<std::string> row = {data.models[i]->name, g->name};
      for (int64_t n : data.counts) {
        const CostRow* r = cost_row(data, i, g, n);
        if (r == nullptr || !r->time.fits) {
          row.push_back(kNothingFits);
          continue;
        }
        row.push_back(fmt::format("{} amortised\n{} cloud",
                                  format_usd_or_na(r->amortised_usd),
                                  format_usd_or_na(r->cloud_usd)));
      }
      t.rows.push_back(std::move(row));
    }
  }
  t.caption = fmt::format(
      "The cost of one pre-training run: amortised = purchase (GPUs + base machine) x days / "
      "({:g} x 365), the paper's experiment cost; cloud = GPU-hours x the catalog's on-demand "
      "$/GPU-hour (n/a: no rental price). Days: {}. {}: cannot run. Raw rows: costs.csv.",
      data.cost.assumptions.amortisation.years,
      data.cost_time_source,
      kNothingFits);
  return t;
}

std::string training_days_csv(const ReportData& data) {
  std::string out =
      "model,gpu,gpu_count,table,fits,training_days,training_days_low,training_days_high,source,"
      "provenance,settings,reason\n";
  const auto add = [&out](const TierDetail& d, const char* table, const TrainingTime& t, bool m) {
    const bool range = t.fits && t.training_days_range.has_value();
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       csv_field(d.model),
                       csv_field(d.gpu),
                       d.layout.world_size(),
                       table,
                       t.fits,
                       t.fits ? number(t.training_days) : "",
                       range ? number(t.training_days_range->low) : "",
                       range ? number(t.training_days_range->high) : "",
                       m ? "measured" : "predicted",
                       csv_field(t.provenance),
                       csv_field(t.settings),
                       csv_field(t.reason));
  };
  for (const TierDetail& d : data.details) {
    if (d.measured) {
      add(d, "optimal", *d.measured, /*m=*/true);
    } else {
      add(d, "optimal", d.tiers[kAll], /*m=*/false);
    }
    add(d, "naive", d.tiers[kNaive], /*m=*/false);
  }
  return out;
}

std::string memory_methods_csv(const ReportData& data) {
  std::string out = "model,gpu,gpu_count,methods,fits,training_days,relative_to_fastest,source\n";
  const std::vector<MethodColumn>& columns = memory_saving_columns();
  for (const TierDetail& d : data.details) {
    if (d.layout.world_size() != data.detail_gpu_count) continue;
    const MethodComparison& m = d.methods;
    for (size_t c = 0; c < columns.size(); ++c) {
      const bool fits = m.days[c].has_value();
      out += fmt::format("{},{},{},{},{},{},{},predicted (planner rows of preset all)\n",
                         csv_field(m.model),
                         csv_field(m.gpu),
                         m.layout.world_size(),
                         csv_field(describe(columns[c].methods)),
                         fits,
                         fits ? number(*m.days[c]) : "",
                         fits ? number(*m.days[c] / *m.best_days) : "");
    }
  }
  return out;
}

std::string relative_speed_csv(const ReportData& data) {
  std::string out =
      "model,gpu,gpu_count,analytic_days,naive_relative_speed,free_lunch_relative_speed,"
      "all_relative_speed,source\n";
  for (const TierDetail& d : data.details) {
    const double analytic = analytic_days(d);
    std::string cells;
    for (const TrainingTime& t : d.tiers) {
      cells += "," + (analytic > 0 && t.fits ? number(analytic / t.training_days) : "");
    }
    out += fmt::format("{},{},{},{}{},predicted (planner best rows of each preset)\n",
                       csv_field(d.model),
                       csv_field(d.gpu),
                       d.layout.world_size(),
                       analytic > 0 ? number(analytic) : "",
                       cells);
  }
  return out;
}

}  // namespace gpudays
