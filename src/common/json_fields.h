// Integers read from JSON documents (trial specifications, config.json, the host CPU's probe and
// its cache): a value is taken only when it is an integer of 64 bits. The caller names the file
// and the key in its one-line error; nothing here is converted by wrapping or truncating.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace gpudays {

// `v` as an int64, or nothing when it is not one. nlohmann keeps a parsed number as signed
// (-2^63 to 2^63-1), unsigned (from 2^63 to 2^64-1, such as 10000000000000000000, which
// get<int64_t>() would wrap to a negative) or floating point (a fraction such as -1.5, an
// exponent such as 4.9e19, a literal past 2^64-1; 1e400 already fails the parser). Only the
// signed, and the unsigned up to 2^63-1, are integers of 64 bits; "4.0" is not an integer either.
inline std::optional<int64_t> json_int64(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

}  // namespace gpudays
