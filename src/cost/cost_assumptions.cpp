// Loading configs/cost/cost.toml into CostAssumptions, with the catalog's checked TOML access
// (a missing source or an unknown key is an error, so a typo cannot silently change a default).
#include "cost/cost_assumptions.h"

#include <filesystem>

#include <fmt/format.h>

#include "catalog/gpu_spec.h"
#include "catalog/toml_fields.h"
#include "common/error.h"
#include "search_space/search_space.h"

namespace gpudays {
namespace {

// `value` in [low, high] ((low, high] when `low_open`; NaN is in neither), else the key's error.
void require_in_range(const TomlFields& t,
                      std::string_view key,
                      double value,
                      double low,
                      double high,
                      bool low_open = false) {
  const bool above_low = low_open ? value > low : value >= low;
  if (!(above_low && value <= high)) {
    t.fail(key,
           fmt::format("{:g} is not in {}{:g}, {:g}]", value, low_open ? "(" : "[", low, high));
  }
}

void read_base_machines(const TomlFields& t, CostAssumptions& a) {
  const std::vector<int64_t> counts = t.get_int_array("gpus_per_node");
  const std::vector<int64_t> usd = t.get_int_array("usd");
  if (counts.empty() || counts.size() != usd.size()) {
    t.fail("usd", "needs one price per entry of gpus_per_node");
  }
  a.base_machines.clear();
  for (size_t i = 0; i < counts.size(); ++i) {
    // The planner's largest node (search_space.h) bounds the machine sizes.
    if (counts[i] < 1 || counts[i] > kMaxGpusPerNode) {
      t.fail("gpus_per_node",
             fmt::format("{} is not a GPU count in [1, {}]", counts[i], kMaxGpusPerNode));
    }
    if (i > 0 && counts[i] <= counts[i - 1]) t.fail("gpus_per_node", "must be ascending");
    require_in_range(t, "usd", static_cast<double>(usd[i]), 0.0, kMaxBaseMachineUsd);
    a.base_machines.push_back({counts[i], static_cast<double>(usd[i])});
  }
  t.get_string("date");
  a.base_machine_source = t.get_string("source");
}

void read_energy(const TomlFields& t, CostAssumptions& a) {
  EnergyOptions& e = a.energy;
  e.usd_per_kwh = t.get_double("usd_per_kwh") + 0.0;  // -0 is 0: no cost prints as "-0"
  a.energy_price_source = t.get_string("source");
  e.grid_gco2_per_kwh = t.get_double("grid_gco2_per_kwh") + 0.0;
  a.grid_source = t.get_string("grid_source");
  e.power_fraction_of_tdp = t.get_double("power_fraction_of_tdp");
  a.power_source = t.get_string("power_source");
  require_in_range(t, "usd_per_kwh", e.usd_per_kwh, 0.0, kMaxUsdPerKwh);
  require_in_range(t, "grid_gco2_per_kwh", e.grid_gco2_per_kwh, 0.0, kMaxGridGco2PerKwh);
  require_in_range(
      t, "power_fraction_of_tdp", e.power_fraction_of_tdp, 0.0, kMaxPowerFractionOfTdp, true);
}

void read_amortisation(const TomlFields& t, CostAssumptions& a) {
  a.amortisation.years = t.get_double("years");
  a.amortisation_source = t.get_string("source");
  require_in_range(t, "years", a.amortisation.years, kMinAmortisationYears, kMaxAmortisationYears);
}

}  // namespace

std::string cost_assumptions_path(const std::string& config_dir) {
  return (std::filesystem::path(config_dir) / "cost" / "cost.toml").string();
}

CostAssumptions load_cost_assumptions(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw InputError(fmt::format("cost assumptions file {} does not exist", path));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(fmt::format("cost assumptions file {} is a directory", path));
  }
  const TomlFields root = TomlFields::parse_file(path);
  CostAssumptions a;
  a.source_path = path;
  const TomlFields base = root.table("base_machine");
  read_base_machines(base, a);
  base.check_all_used("docs/cost.md");
  const TomlFields amortisation = root.table("amortisation");
  read_amortisation(amortisation, a);
  amortisation.check_all_used("docs/cost.md");
  const TomlFields energy = root.table("energy");
  read_energy(energy, a);
  energy.check_all_used("docs/cost.md");
  root.check_all_used("docs/cost.md");
  return a;
}

std::string describe_power_cap(const EnergyOptions& energy) {
  if (energy.power_limit_fraction >= 1.0) return "";
  return fmt::format("GPUs capped at {:g} of their TDP: compute at {:.3f} of its rate",
                     energy.power_limit_fraction,
                     GpuSpec::clock_factor_at(energy.power_limit_fraction));
}

}  // namespace gpudays
