// Loading configs/cost/cost.toml into CostAssumptions, with the catalog's checked TOML access
// (a missing source or an unknown key is an error, so a typo cannot silently change a default).
#include "cost/cost_assumptions.h"

#include <filesystem>

#include <fmt/format.h>

#include "catalog/toml_fields.h"
#include "common/error.h"

namespace gpudays {
namespace {

void read_base_machines(const TomlFields& t, CostAssumptions& a) {
  const std::vector<int64_t> counts = t.get_int_array("gpus_per_node");
  const std::vector<int64_t> usd = t.get_int_array("usd");
  if (counts.empty() || counts.size() != usd.size()) {
    t.fail("usd", "needs one price per entry of gpus_per_node");
  }
  a.base_machines.clear();
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] <= 0 || usd[i] < 0) t.fail("gpus_per_node", "counts and prices must be positive");
    if (i > 0 && counts[i] <= counts[i - 1]) t.fail("gpus_per_node", "must be ascending");
    a.base_machines.push_back({counts[i], static_cast<double>(usd[i])});
  }
  t.get_string("date");
  a.base_machine_source = t.get_string("source");
}

void read_energy(const TomlFields& t, CostAssumptions& a) {
  a.energy.usd_per_kwh = t.get_double("usd_per_kwh");
  a.energy_price_source = t.get_string("source");
  a.energy.grid_gco2_per_kwh = t.get_double("grid_gco2_per_kwh");
  a.grid_source = t.get_string("grid_source");
  a.energy.power_fraction_of_tdp = t.get_double("power_fraction_of_tdp");
  a.power_source = t.get_string("power_source");
  if (a.energy.usd_per_kwh < 0) t.fail("usd_per_kwh", "must not be negative");
  if (a.energy.grid_gco2_per_kwh < 0) t.fail("grid_gco2_per_kwh", "must not be negative");
  const double f = a.energy.power_fraction_of_tdp;
  if (f <= 0 || f > 1.5) t.fail("power_fraction_of_tdp", "must be in (0, 1.5]");
}

}  // namespace

std::string cost_assumptions_path(const std::string& config_dir) {
  return (std::filesystem::path(config_dir) / "cost" / "cost.toml").string();
}

CostAssumptions load_cost_assumptions(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(fmt::format("cost assumptions file {} does not exist", path));
  }
  const TomlFields root = TomlFields::parse_file(path);
  CostAssumptions a;
  a.source_path = path;
  const TomlFields base = root.table("base_machine");
  read_base_machines(base, a);
  base.check_all_used();
  const TomlFields amortisation = root.table("amortisation");
  a.amortisation.years = amortisation.get_double("years");
  a.amortisation_source = amortisation.get_string("source");
  if (a.amortisation.years <= 0) amortisation.fail("years", "must be positive");
  amortisation.check_all_used();
  const TomlFields energy = root.table("energy");
  read_energy(energy, a);
  energy.check_all_used();
  root.check_all_used();
  return a;
}

}  // namespace gpudays
