// Cost analysis output: the cost row's columns, the table with notes, the JSON document.
#include "rows/cost_summary.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "common/units.h"
#include "cost/cost_format.h"
#include "rows/cost_rows.h"
#include "rows/table.h"

namespace gpudays {
namespace {

// Table cells carry no "$" so the table right-aligns them; the header names the unit.
std::string dollars(std::optional<double> usd) {
  return usd ? format_dollars(*usd) : "n/a";
}

std::string option_name(const CostRow& r) {
  return fmt::format("{} x {}", r.layout.world_size(), r.gpu);
}

std::string point_summary(const CostRow& r, CostBasis basis) {
  return fmt::format("{} ({:.1f} days, {} {})",
                     option_name(r),
                     r.time.training_days,
                     format_usd_or_na(basis_cost_usd(r, basis)),
                     to_string(basis));
}

std::vector<std::string> table_cells(const CostRow& r) {
  const bool fits = r.time.fits;
  const auto num = [fits](const char* fmt_spec, double v) {
    return fits ? fmt::format(fmt::runtime(fmt_spec), v) : std::string("-");
  };
  return {r.gpu,
          std::to_string(r.layout.world_size()),
          std::to_string(r.layout.num_nodes),
          fits ? num("{:.1f}", r.time.training_days) : "infeasible",
          fits && r.time.training_days_range ? fmt::format("{:.1f}-{:.1f}",
                                                           r.time.training_days_range->low,
                                                           r.time.training_days_range->high)
                                             : "-",
          num("{:.1f}", r.time.gpu_days),
          fits ? fmt::format("{:.0f}%", 100 * r.time.mfu) : "-",
          dollars(r.purchase.total_usd()),
          fits ? dollars(r.amortised_usd) : "-",
          fits ? dollars(r.cloud_usd) : "-",
          r.energy ? format_count(std::llround(r.energy->kwh)) : "-",
          r.energy ? dollars(r.energy->usd) : "-",
          r.energy ? format_count(std::llround(r.energy->co2_kg)) : "-",
          r.on_frontier ? "*" : "",
          fits ? r.time.settings : r.time.reason};
}

void print_queries(std::ostream& out, const CostAnalysis& a, const CostOptions& cost) {
  if (cost.max_days) {
    out << fmt::format("--max-days {:g}: ", *cost.max_days);
    if (a.cheapest_within_max_days) {
      out << "cheapest is " << point_summary(a.rows[*a.cheapest_within_max_days], cost.basis)
          << "\n";
    } else {
      out << "no option finishes in time\n";
    }
  }
  if (cost.budget_usd) {
    out << fmt::format("--budget {}: ", format_usd(*cost.budget_usd));
    if (a.fastest_within_budget) {
      out << "fastest is " << point_summary(a.rows[*a.fastest_within_budget], cost.basis) << "\n";
    } else {
      out << "no option is within budget\n";
    }
  }
}

void print_assumptions(std::ostream& out, const CostAnalysis& a, const CostOptions& cost) {
  const CostAssumptions& s = cost.assumptions;
  std::string machines;
  for (const BaseMachinePrice& m : s.base_machines) {
    machines += fmt::format("{}{} GPU{} {}",
                            machines.empty() ? "" : ", ",
                            m.gpus_per_node,
                            m.gpus_per_node == 1 ? "" : "s",
                            format_usd(m.usd));
  }
  out << fmt::format("Base machine: {} ({}: {})\n", machines, s.source_path, s.base_machine_source);
  out << fmt::format(
      "Amortised over {:g} years; energy = TDP x GPUs x hours x {:g}{}, at {}/kWh "
      "and {:g} gCO2/kWh (GPUs only; sources in {})\n",
      s.amortisation.years,
      s.energy.draw_fraction_of_tdp(),
      s.energy.power_limit_fraction < 1.0 ? " (" + describe_power_cap(s.energy) + ")"
                                          : std::string(),
      format_usd(s.energy.usd_per_kwh),
      s.energy.grid_gco2_per_kwh,
      s.source_path);
  std::set<std::string> seen;
  for (const CostRow& r : a.rows) {
    if (!seen.insert(r.gpu).second) continue;
    const std::string cloud =
        r.price.cloud_usd_per_gpu_hour
            ? fmt::format("{}/GPU-hour", format_usd(*r.price.cloud_usd_per_gpu_hour))
            : "n/a (no rental price known)";
    out << fmt::format("Price {}: {} per GPU [{}]; cloud {}{}\n",
                       r.gpu,
                       format_usd(r.price.purchase_usd),
                       r.price.purchase_source,
                       cloud,
                       r.price.cloud_usd_per_gpu_hour ? " [" + r.price.cloud_source + "]" : "");
  }
}

nlohmann::json row_json(const CostRow& r) {
  return row_object(cost_columns(), r);
}

nlohmann::json assumptions_json(const CostAssumptions& s) {
  nlohmann::json machines = nlohmann::json::array();
  for (const BaseMachinePrice& m : s.base_machines) {
    machines.push_back({{"gpus_per_node", m.gpus_per_node}, {"usd", m.usd}});
  }
  return {{"file", s.source_path},
          {"base_machines", machines},
          {"base_machine_source", s.base_machine_source},
          {"amortisation_years", s.amortisation.years},
          {"amortisation_source", s.amortisation_source},
          {"usd_per_kwh", s.energy.usd_per_kwh},
          {"usd_per_kwh_source", s.energy_price_source},
          {"grid_gco2_per_kwh", s.energy.grid_gco2_per_kwh},
          {"grid_source", s.grid_source},
          {"power_fraction_of_tdp", s.energy.power_fraction_of_tdp},
          {"power_limit_fraction", s.energy.power_limit_fraction},
          {"power_source", s.power_source}};
}

nlohmann::json query_json(std::optional<double> asked,
                          std::optional<size_t> answer,
                          const CostAnalysis& a) {
  if (!asked) return nullptr;
  return {{"limit", *asked},
          {"answer", answer ? row_json(a.rows[*answer]) : nlohmann::json(nullptr)}};
}

}  // namespace

nlohmann::json cost_analysis_json(const CostAnalysis& a, const CostReportContext& c) {
  nlohmann::json out = json_document("cost_row");
  out["model"] = c.model;
  out["time_source"] = c.source_name;
  out["cost_basis"] = to_string(c.cost->basis);
  out["assumptions"] = assumptions_json(c.cost->assumptions);
  out["rows"] = nlohmann::json::array();
  for (const CostRow& r : a.rows) out["rows"].push_back(row_json(r));
  out["max_days"] = query_json(c.cost->max_days, a.cheapest_within_max_days, a);
  out["budget"] = query_json(c.cost->budget_usd, a.fastest_within_budget, a);
  return out;
}

void print_cost_rows(std::ostream& out, const CostAnalysis& a, RowFormat format) {
  write_rows(out, make_row_set("cost_row", cost_columns(), a.rows), format);
}

void print_cost_table(std::ostream& out, const CostAnalysis& a, const CostReportContext& c) {
  out << fmt::format("{}: training time from the {}; cost basis for the frontier: {}\n",
                     c.model,
                     c.source_name,
                     to_string(c.cost->basis));
  Table table({"gpu",
               "gpus",
               "nodes",
               "days",
               "days_range",
               "gpu_days",
               "mfu",
               "purchase_$",
               "amortised_$",
               "cloud_$",
               "energy_kwh",
               "energy_$",
               "co2_kg",
               "pareto",
               "settings / reason"});
  for (const CostRow& r : a.rows) table.add_row(table_cells(r));
  table.print(out);
  std::vector<std::string> bases;
  for (const CostRow& r : a.rows) {
    const std::string& basis = r.time.range_basis;
    if (!basis.empty() && std::find(bases.begin(), bases.end(), basis) == bases.end()) {
      bases.push_back(basis);
    }
  }
  if (!bases.empty()) {
    std::string list;
    for (const std::string& b : bases) list += (list.empty() ? "" : "; ") + b;
    out << fmt::format(
        "days_range: where the published time would fall, from the 10th to the 90th "
        "percentile of the planner's error (widened to contain the estimate) on {}\n",
        list);
  }
  std::vector<const CostRow*> on_frontier;
  for (const CostRow& r : a.rows) {
    if (r.on_frontier) on_frontier.push_back(&r);
  }
  std::stable_sort(on_frontier.begin(), on_frontier.end(), [](const CostRow* x, const CostRow* y) {
    return x->time.training_days < y->time.training_days;
  });
  std::string frontier;
  for (const CostRow* r : on_frontier)
    frontier += fmt::format("\n  {}", point_summary(*r, c.cost->basis));
  out << "Pareto frontier (*: no other option is both faster and cheaper):"
      << (frontier.empty() ? " none (nothing runs)" : frontier) << "\n";
  print_queries(out, a, *c.cost);
  print_assumptions(out, a, *c.cost);
}

}  // namespace gpudays
