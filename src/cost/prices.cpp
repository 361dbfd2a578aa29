// Price overrides: parsing NAME=NUMBER assignments and price files, and resolving a GPU's prices
// against the catalog.
#include "cost/prices.h"

#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/error.h"

namespace gpudays {
namespace {

double parse_price(const std::string& text, const std::string& context) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value) || value < 0) {
    throw InputError(fmt::format("{}: '{}' is not a non-negative number", context, text));
  }
  return value + 0.0;  // -0 is 0: no cost prints as "-0"
}

void read_price_table(const toml::table& root,
                      const char* key,
                      const std::string& path,
                      std::map<std::string, PriceOverride>& into) {
  const toml::node* node = root.get(key);
  if (node == nullptr) return;
  const toml::table* table = node->as_table();
  if (table == nullptr) throw InputError(fmt::format("{}: [{}] must be a table", path, key));
  for (const auto& [name, value] : *table) {
    const std::string origin = fmt::format("{} [{}] {}", path, key, name.str());
    const std::optional<double> v = value.value<double>();
    if (!v || !std::isfinite(*v) || *v < 0) {
      throw InputError(fmt::format("{}: must be a non-negative number", origin));
    }
    into[std::string(name.str())] = {*v + 0.0, origin};  // -0 is 0
  }
}

std::map<std::string, PriceOverride> canonical(const std::map<std::string, PriceOverride>& in,
                                               const Catalog& catalog) {
  std::map<std::string, PriceOverride> out;
  for (const auto& [key, price] : in) out[catalog.gpu(key).name] = price;
  return out;
}

// "gpus/a100-80gb-sxm.toml": the catalog file relative to the config directory.
std::string catalog_ref(const std::string& source_path) {
  const std::filesystem::path p(source_path);
  return (p.parent_path().filename() / p.filename()).string();
}

std::string table_source(const GpuSpec& gpu, const char* key) {
  const auto it = gpu.sources.find(key);
  return it == gpu.sources.end() ? std::string() : it->second;
}

}  // namespace

void add_price_assignment(const std::string& text,
                          const std::string& flag,
                          std::map<std::string, PriceOverride>& into) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw InputError(
        fmt::format("{} {}: expected NAME=NUMBER, e.g. {} a100=17000", flag, text, flag));
  }
  const std::string name = text.substr(0, eq);
  into[name] = {parse_price(text.substr(eq + 1), flag + " " + text), flag + " " + text};
}

PriceOverrides load_price_file(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    if (where.line == 0) throw InputError(fmt::format("{}: cannot read price file", path));
    throw InputError(fmt::format("{}:{}:{}: {}", path, where.line, where.column, e.description()));
  }
  for (const auto& [key, value] : root) {
    if (key != "purchase_usd" && key != "cloud_usd_per_gpu_hour") {
      throw InputError(
          fmt::format("{}: unknown table [{}]; valid: [purchase_usd], "
                      "[cloud_usd_per_gpu_hour]",
                      path,
                      key.str()));
    }
  }
  PriceOverrides out;
  read_price_table(root, "purchase_usd", path, out.purchase_usd);
  read_price_table(root, "cloud_usd_per_gpu_hour", path, out.cloud_usd_per_gpu_hour);
  return out;
}

PriceOverrides merge_price_overrides(PriceOverrides earlier, const PriceOverrides& later) {
  for (const auto& [k, v] : later.purchase_usd) earlier.purchase_usd[k] = v;
  for (const auto& [k, v] : later.cloud_usd_per_gpu_hour) earlier.cloud_usd_per_gpu_hour[k] = v;
  return earlier;
}

PriceOverrides canonical_price_overrides(const PriceOverrides& overrides, const Catalog& catalog) {
  return {canonical(overrides.purchase_usd, catalog),
          canonical(overrides.cloud_usd_per_gpu_hour, catalog)};
}

GpuPrice gpu_price(const GpuSpec& gpu, const PriceOverrides& canonical_overrides) {
  GpuPrice p;
  p.purchase_usd = gpu.purchase_usd;
  p.purchase_source = fmt::format("catalog {} [price], {}: {}",
                                  catalog_ref(gpu.source_path),
                                  gpu.purchase_date,
                                  table_source(gpu, "price"));
  if (gpu.cloud_usd_per_gpu_hour > 0) {
    p.cloud_usd_per_gpu_hour = gpu.cloud_usd_per_gpu_hour;
    p.cloud_source = fmt::format("catalog {} [price], {}: {}",
                                 catalog_ref(gpu.source_path),
                                 gpu.cloud_date,
                                 table_source(gpu, "cloud"));
  }
  if (auto it = canonical_overrides.purchase_usd.find(gpu.name);
      it != canonical_overrides.purchase_usd.end()) {
    p.purchase_usd = it->second.value;
    p.purchase_source = it->second.origin;
  }
  if (auto it = canonical_overrides.cloud_usd_per_gpu_hour.find(gpu.name);
      it != canonical_overrides.cloud_usd_per_gpu_hour.end()) {
    p.cloud_usd_per_gpu_hour = it->second.value;
    p.cloud_source = it->second.origin;
  }
  return p;
}

}  // namespace gpudays
