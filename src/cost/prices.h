// GPU prices for the cost model: the catalog's purchase and cloud prices, replaced where the user
// overrides them (--price NAME=USD, --cloud-price NAME=USD_PER_HOUR, or a --prices TOML file).
// Every resolved price says where it came from.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "catalog/gpu_spec.h"

namespace gpudays {

struct PriceOverride {
  double value = 0.0;
  std::string origin;  // "--price a100=17000" or "prices.toml [purchase_usd] a100"
};

struct PriceOverrides {
  std::map<std::string, PriceOverride> purchase_usd;            // GPU name (or alias) -> USD
  std::map<std::string, PriceOverride> cloud_usd_per_gpu_hour;  // GPU name (or alias) -> USD/h
};

struct GpuPrice {
  double purchase_usd = 0.0;
  std::string purchase_source;
  std::optional<double> cloud_usd_per_gpu_hour;  // nullopt: no price known ("n/a", never 0)
  std::string cloud_source;
};

// Parses "NAME=NUMBER" (from `flag`, e.g. "--price") into `into`; throws InputError when malformed
// or negative.
void add_price_assignment(const std::string& text,
                          const std::string& flag,
                          std::map<std::string, PriceOverride>& into);

// A TOML file with tables [purchase_usd] and/or [cloud_usd_per_gpu_hour] of NAME = NUMBER.
PriceOverrides load_price_file(const std::string& path);

// `later` wins over `earlier` for the same key.
PriceOverrides merge_price_overrides(PriceOverrides earlier, const PriceOverrides& later);

// Re-keys the overrides by catalog name (aliases resolved); an unknown GPU throws InputError
// naming the valid choices.
PriceOverrides canonical_price_overrides(const PriceOverrides& overrides, const Catalog& catalog);

// The GPU's prices after canonical overrides.
GpuPrice gpu_price(const GpuSpec& gpu, const PriceOverrides& canonical_overrides);

}  // namespace gpudays
