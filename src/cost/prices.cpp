// Price overrides: parsing NAME=NUMBER assignments and price files, and resolving a GPU's prices
// against the catalog.
#include "cost/prices.h"

#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "catalog/toml_document.h"
#include "common/error.h"
#include "common/input_files.h"

namespace gpudays {
namespace {

bool in_price_range(double value, PriceKind kind) {
  if (kind == PriceKind::kPurchase) return value >= 0.0 && value <= kMaxGpuPurchaseUsd;
  return value > 0.0 && value <= kMaxCloudUsdPerGpuHour;
}

std::string price_range_text(PriceKind kind) {
  if (kind == PriceKind::kPurchase) {
    return fmt::format("a purchase price in [0, {:g}] USD", kMaxGpuPurchaseUsd);
  }
  return fmt::format(
      "a rental price in (0, {:g}] USD per GPU-hour (0 is not a price: for no price known, leave "
      "the GPU out)",
      kMaxCloudUsdPerGpuHour);
}

double parse_price(const std::string& text, const std::string& context, PriceKind kind) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !in_price_range(value, kind)) {
    throw InputError(fmt::format("{}: '{}' is not {}", context, text, price_range_text(kind)));
  }
  return value + 0.0;  // -0 is 0: no cost prints as "-0"
}

void read_price_table(const toml::table& root,
                      const char* key,
                      PriceKind kind,
                      const std::string& path,
                      std::map<std::string, PriceOverride>& into) {
  const toml::node* node = root.get(key);
  if (node == nullptr) return;
  const toml::table* table = node->as_table();
  if (table == nullptr) throw InputError(fmt::format("{}: [{}] must be a table", path, key));
  for (const auto& [name, value] : *table) {
    const std::string origin = fmt::format("{} [{}] {}", path, key, name.str());
    const std::optional<double> v = value.value<double>();
    if (!v || !in_price_range(*v, kind)) {
      throw InputError(fmt::format("{}: must be {}", origin, price_range_text(kind)));
    }
    into[std::string(name.str())] = {*v + 0.0, origin};  // -0 is 0
  }
}

// The only top-level entries of a price file are its two tables.
void check_price_file_keys(const toml::table& root, const std::string& path) {
  for (const auto& [key, value] : root) {
    if (key == "purchase_usd" || key == "cloud_usd_per_gpu_hour") continue;
    throw InputError(fmt::format(
        "{}: unknown {} {}; valid: [purchase_usd], "
        "[cloud_usd_per_gpu_hour] (NAME = number inside them)",
        path,
        value.is_table() ? "table" : "key",
        value.is_table() ? fmt::format("[{}]", key.str()) : fmt::format("'{}'", key.str())));
  }
}

// The catalog name of an override's GPU; an unknown one names where the override came from.
std::string catalog_gpu_name(const Catalog& catalog,
                             const std::string& key,
                             const PriceOverride& price) {
  try {
    return catalog.gpu(key).name;
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", price.origin, e.what()));
  }
}

std::map<std::string, PriceOverride> canonical(const std::map<std::string, PriceOverride>& in,
                                               const Catalog& catalog) {
  std::map<std::string, PriceOverride> out;
  for (const auto& [key, price] : in) {
    const std::string name = catalog_gpu_name(catalog, key, price);
    const auto [it, inserted] = out.emplace(name, price);
    if (!inserted) {
      throw InputError(
          fmt::format("{} and {} both price {}; give one", it->second.origin, price.origin, name));
    }
  }
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

// The catalog's prices of the GPU, with their sources; a cloud price of 0 is unknown.
GpuPrice catalog_price(const GpuSpec& gpu) {
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
  return p;
}

// A catalog price the cost model would use must be in the range overrides are held to.
void check_catalog_price(const GpuSpec& gpu, const char* key, double usd, PriceKind kind) {
  if (in_price_range(usd, kind)) return;
  throw InputError(fmt::format("{}: [price] {}: {:g} is not {} (or override it with --{})",
                               gpu.source_path,
                               key,
                               usd,
                               price_range_text(kind),
                               kind == PriceKind::kPurchase ? "price" : "cloud-price"));
}

}  // namespace

void add_price_assignment(const std::string& text,
                          const std::string& flag,
                          std::map<std::string, PriceOverride>& into,
                          PriceKind kind) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw InputError(
        fmt::format("{} {}: expected NAME=NUMBER, e.g. {} a100=17000", flag, text, flag));
  }
  const std::string name = text.substr(0, eq);
  const std::string origin = flag + " " + text;
  const double value = parse_price(text.substr(eq + 1), origin, kind);
  if (const auto it = into.find(name); it != into.end()) {
    throw InputError(
        fmt::format("{} and {} both price {}; give one", it->second.origin, origin, name));
  }
  into[name] = {value, origin};
}

PriceOverrides load_price_file(const std::string& path) {
  check_input_file(path, kMaxTomlFileBytes, "gpudays' TOML files");
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    if (where.line == 0) throw InputError(fmt::format("{}: cannot read price file", path));
    throw InputError(fmt::format("{}:{}:{}: {}", path, where.line, where.column, e.description()));
  }
  check_price_file_keys(root, path);
  PriceOverrides out;
  read_price_table(root, "purchase_usd", PriceKind::kPurchase, path, out.purchase_usd);
  read_price_table(
      root, "cloud_usd_per_gpu_hour", PriceKind::kCloud, path, out.cloud_usd_per_gpu_hour);
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
  GpuPrice p = catalog_price(gpu);
  if (auto it = canonical_overrides.purchase_usd.find(gpu.name);
      it != canonical_overrides.purchase_usd.end()) {
    p.purchase_usd = it->second.value;
    p.purchase_source = it->second.origin;
  } else {
    check_catalog_price(gpu, "purchase_usd", gpu.purchase_usd, PriceKind::kPurchase);
  }
  if (auto it = canonical_overrides.cloud_usd_per_gpu_hour.find(gpu.name);
      it != canonical_overrides.cloud_usd_per_gpu_hour.end()) {
    p.cloud_usd_per_gpu_hour = it->second.value;
    p.cloud_source = it->second.origin;
  } else if (p.cloud_usd_per_gpu_hour) {
    check_catalog_price(
        gpu, "cloud_usd_per_gpu_hour", *p.cloud_usd_per_gpu_hour, PriceKind::kCloud);
  }
  return p;
}

}  // namespace gpudays
