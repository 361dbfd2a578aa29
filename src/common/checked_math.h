// Overflow-checked arithmetic for products of sizes (batches, counts, bytes) that come from input:
// a product past int64 is reported, never wrapped.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace gpudays {

// The product of `factors`, or nothing when it does not fit in int64.
inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (const int64_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) return std::nullopt;
  }
  return product;
}

}  // namespace gpudays
