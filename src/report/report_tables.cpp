// The report's tables and CSV files: every number with the planner row or catalog entry it came
// from named in the caption or a column.
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cost/cost_format.h"
#include "report/report.h"
#include "rows/cost_rows.h"

namespace gpudays {
namespace {

// "31.3 (20.6-32.9)": the days and the planner's range from its validation residuals.
std::string days(const TrainingTime& t) {
  if (!t.fits) return "infeasible";
  if (!t.training_days_range) return fmt::format("{:.1f}", t.training_days);
  return fmt::format("{:.1f} ({:.1f}-{:.1f})",
                     t.training_days,
                     t.training_days_range->low,
                     t.training_days_range->high);
}

// The range's low and high ends as two CSV cells, empty without a range.
std::string range_cells(const TrainingTime& t) {
  if (!t.fits || !t.training_days_range) return ",";
  return fmt::format("{:.6g},{:.6g}", t.training_days_range->low, t.training_days_range->high);
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

DocTable cost_table(const ReportData& data, size_t model_index) {
  DocTable t;
  t.name = "cost_" + file_stem(data.models[model_index]->name);
  t.headers = {"GPU",
               "GPUs",
               "days",
               "GPU-days",
               "MFU",
               "purchase",
               "amortised",
               "cloud",
               "energy",
               "CO2",
               "frontier",
               "settings (planner) or reason"};
  for (const CostRow& r : data.costs[model_index].rows) {
    const bool fits = r.time.fits;
    t.rows.push_back({r.gpu,
                      std::to_string(r.layout.world_size()),
                      days(r.time),
                      fits ? fmt::format("{:.1f}", r.time.gpu_days) : "-",
                      fits ? fmt::format("{:.0f}%", 100 * r.time.mfu) : "-",
                      format_usd(r.purchase.total_usd()),
                      fits ? format_usd_or_na(r.amortised_usd) : "-",
                      fits ? format_usd_or_na(r.cloud_usd) : "-",
                      r.energy ? format_kwh(r.energy->kwh) : "-",
                      r.energy ? format_co2_kg(r.energy->co2_kg) : "-",
                      r.on_frontier ? "yes" : "",
                      fits ? r.time.settings : r.time.reason});
  }
  t.caption = fmt::format(
      "Sources: days, GPU-days, MFU and settings are the {}; the days' range in brackets is "
      "the 10th-90th percentile of the planner's error on published measurements of that GPU "
      "type (all GPUs when it has fewer than 3; `gpudays validate`); purchase = catalog GPU price "
      "(configs/gpus, [price]) x GPUs + base machine per node ({}); amortised = purchase x days / "
      "({:g} x 365); cloud = GPU-hours x catalog $/GPU-hour (n/a: no rental price in the catalog); "
      "energy = TDP x GPUs x hours x {:g}, CO2 at {:g} g/kWh. Raw numbers: costs.csv.",
      data.cost_time_source,
      data.cost.assumptions.source_path,
      data.cost.assumptions.amortisation.years,
      data.cost.assumptions.energy.draw_fraction_of_tdp(),
      data.cost.assumptions.energy.grid_gco2_per_kwh);
  return t;
}

DocTable feasibility_table(const ReportData& data) {
  DocTable t;
  t.name = "feasibility";
  t.headers = {"model"};
  for (const GpuSpec* g : data.gpus) t.headers.push_back(g->name);
  for (size_t i = 0; i < data.models.size(); ++i) {
    std::vector<std::string> row = {data.models[i]->name};
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      std::string cell;
      for (int64_t count : data.counts) {
        const int tier = lightest_fitting_tier(tier_detail(data, i, j, count));
        cell += fmt::format("{}{}: {}",
                            cell.empty() ? "" : "; ",
                            count,
                            tier < 0 ? "infeasible" : to_string(kReportTiers[tier]));
      }
      row.push_back(cell);
    }
    t.rows.push_back(std::move(row));
  }
  t.caption =
      "Per GPU count, the lightest method preset with a configuration that fits in memory "
      "(planner rows of presets naive, free-lunch and all; 'all' adds the memory-saving methods: "
      "activation checkpointing, sharding, offloading). Raw rows: tiers.csv.";
  return t;
}

DocTable gpu_days_table(const ReportData& data) {
  DocTable t;
  t.name = "gpu_days";
  t.headers = {"model", "reported run", "reported GPU-days"};
  for (const GpuSpec* g : data.gpus) t.headers.push_back(g->name + " GPU-days (ratio)");
  t.headers.push_back("source of the reported run");
  for (size_t i = 0; i < data.models.size(); ++i) {
    const ModelSpec& m = *data.models[i];
    if (m.reported_gpu_days() <= 0) continue;  // none, or not on GPUs
    std::vector<std::string> row = {
        m.name,
        fmt::format("{} x {} for {:g} days",
                    m.reported->gpus,
                    m.reported->gpu.empty() ? "GPUs (type not given)" : m.reported->gpu,
                    m.reported->days),
        fmt::format("{:g}", m.reported_gpu_days())};
    for (size_t j = 0; j < data.gpus.size(); ++j) {
      const TrainingTime& a =
          tier_detail(data, i, j, data.detail_gpu_count).tiers[kReportTierCount - 1];
      row.push_back(
          a.fits ? fmt::format("{:.1f} ({:.2f}x)", a.gpu_days, a.gpu_days / m.reported_gpu_days())
                 : "infeasible");
    }
    row.push_back(m.reported->source);
    t.rows.push_back(std::move(row));
  }
  t.caption = fmt::format(
      "Planned GPU-days: planner best row (preset all) on {} GPUs; reported runs: the model "
      "catalog's [reported] table (configs/models).",
      data.detail_gpu_count);
  return t;
}

DocTable speedup_table(const ReportData& data) {
  DocTable t;
  t.name = "speedup";
  t.headers = {"model",
               "GPU",
               "naive days",
               "free-lunch days",
               "all days",
               "free-lunch speed-up",
               "all speed-up",
               "fastest settings (all)"};
  for (const TierDetail& d : data.details) {
    if (d.layout.world_size() != data.detail_gpu_count) continue;
    const TrainingTime& naive = d.tiers[0];
    const auto speedup = [&naive](const TrainingTime& tier) {
      return naive.fits && tier.fits
                 ? fmt::format("{:.2f}x", naive.training_days / tier.training_days)
                 : std::string("-");
    };
    t.rows.push_back({d.model,
                      d.gpu,
                      days(naive),
                      days(d.tiers[1]),
                      days(d.tiers[2]),
                      speedup(d.tiers[1]),
                      speedup(d.tiers[2]),
                      d.tiers[2].fits ? d.tiers[2].settings : d.tiers[2].reason});
  }
  t.caption = fmt::format(
      "Planner best rows of presets naive, free-lunch and all on {} GPUs; "
      "speed-up = naive days / tier days ('-': naive does not fit).",
      data.detail_gpu_count);
  return t;
}

DocList sources_list(const ReportData& data) {
  const CostAssumptions& a = data.cost.assumptions;
  DocList list;
  std::string machines;
  for (const BaseMachinePrice& m : a.base_machines) {
    machines += fmt::format(
        "{}{} GPU(s): {}", machines.empty() ? "" : "; ", m.gpus_per_node, format_usd(m.usd));
  }
  list.items.push_back(fmt::format(
      "Base machine ({}): {}. Source: {}", a.source_path, machines, a.base_machine_source));
  list.items.push_back(fmt::format(
      "Amortisation over {:g} years. Source: {}", a.amortisation.years, a.amortisation_source));
  list.items.push_back(fmt::format(
      "Electricity {}/kWh. Source: {}", format_usd(a.energy.usd_per_kwh), a.energy_price_source));
  list.items.push_back(fmt::format("Grid carbon intensity {:g} gCO2/kWh. Source: {}",
                                   a.energy.grid_gco2_per_kwh,
                                   a.grid_source));
  list.items.push_back(fmt::format("GPU power draw {:g} x TDP (TDP: catalog [power]). Source: {}",
                                   a.energy.power_fraction_of_tdp,
                                   a.power_source));
  if (a.energy.power_limit_fraction < 1.0) {
    list.items.push_back(describe_power_cap(a.energy) +
                         " (--power-limit-fraction; the cube root: docs/planner.md, \"Power "
                         "limits\"); the draw at most the cap");
  }
  std::set<std::string> seen;
  for (const CostAnalysis& c : data.costs) {
    for (const CostRow& r : c.rows) {
      if (!seen.insert(r.gpu).second) continue;
      list.items.push_back(fmt::format(
          "{}: {} per GPU ({}); cloud {}",
          r.gpu,
          format_usd(r.price.purchase_usd),
          r.price.purchase_source,
          r.price.cloud_usd_per_gpu_hour ? fmt::format("{}/GPU-hour ({})",
                                                       format_usd(*r.price.cloud_usd_per_gpu_hour),
                                                       r.price.cloud_source)
                                         : std::string("n/a (no rental price in the catalog)")));
    }
  }
  return list;
}

// Every cost row of every model, with the cost row's columns (rows/cost_rows.h), as `gpudays cost
// --format csv` writes them.
std::string cost_rows_csv(const ReportData& data) {
  std::vector<CostRow> rows;
  for (const CostAnalysis& c : data.costs) rows.insert(rows.end(), c.rows.begin(), c.rows.end());
  std::ostringstream out;
  write_rows(out, make_row_set("cost_row", cost_columns(), rows), RowFormat::kCsv);
  return out.str();
}

std::string tier_rows_csv(const ReportData& data) {
  std::string out =
      "model,gpu,gpu_count,preset,fits,training_days,training_days_low,training_days_high,gpu_days,"
      "mfu,settings,reason\n";
  for (const TierDetail& d : data.details) {
    for (size_t k = 0; k < kReportTierCount; ++k) {
      const TrainingTime& t = d.tiers[k];
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n",
                         d.model,
                         d.gpu,
                         d.layout.world_size(),
                         to_string(kReportTiers[k]),
                         t.fits,
                         t.fits ? fmt::format("{:.6g}", t.training_days) : "",
                         range_cells(t),
                         t.fits ? fmt::format("{:.6g}", t.gpu_days) : "",
                         t.fits ? fmt::format("{:.4f}", t.mfu) : "",
                         csv_cell(t.settings),
                         csv_cell(t.reason));
    }
  }
  return out;
}

}  // namespace gpudays
