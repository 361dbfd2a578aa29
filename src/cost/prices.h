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

// The range of every price the cost model uses (an override or the catalog's), so that no cost
// overflows or prints as an absurd number: a GPU costs at most $10M to buy (catalog GPUs cost
// $1,300-$40,000) and rents for more than $0 and at most $10,000 per GPU-hour (on-demand prices
// are $0.2-$10). A rental price of 0 is refused, not taken as free: in the catalog 0 means
// "unknown" (n/a), which an override expresses by leaving the GPU out.
inline constexpr double kMaxGpuPurchaseUsd = 1.0e7;
inline constexpr double kMaxCloudUsdPerGpuHour = 1.0e4;

enum class PriceKind { kPurchase, kCloud };

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

// Parses "NAME=NUMBER" (from `flag`, e.g. "--price") into `into`; throws InputError when malformed,
// out of the kind's range, or when `into` already has NAME (two values for one GPU: give one).
void add_price_assignment(const std::string& text,
                          const std::string& flag,
                          std::map<std::string, PriceOverride>& into,
                          PriceKind kind = PriceKind::kPurchase);

// A TOML file with tables [purchase_usd] and/or [cloud_usd_per_gpu_hour] of NAME = NUMBER.
PriceOverrides load_price_file(const std::string& path);

// `later` wins over `earlier` for the same key; merge canonical overrides (an alias in one and
// the catalog name in the other are the same GPU only after canonical_price_overrides).
PriceOverrides merge_price_overrides(PriceOverrides earlier, const PriceOverrides& later);

// Re-keys the overrides of one source by catalog name (aliases resolved). Throws InputError
// naming the override's origin for an unknown GPU (and the valid choices), and naming both
// origins when two of them (an alias and the catalog name) price the same GPU.
PriceOverrides canonical_price_overrides(const PriceOverrides& overrides, const Catalog& catalog);

// The GPU's prices after canonical overrides. Throws InputError naming the source when a catalog
// price is outside the range above (overrides are checked when parsed).
GpuPrice gpu_price(const GpuSpec& gpu, const PriceOverrides& canonical_overrides);

}  // namespace gpudays
