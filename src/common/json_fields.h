// Integers read from JSON documents (trial specifications, config.json, the host CPU's probe and
// its cache): a value is taken only when it is an integer of 64 bits. The caller names the file
// and the key in its one-line error; nothing here is converted by wrapping or truncating.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"

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

// j[key] as an int64; `fallback` when the key is absent and a fallback is given. Anything else
// (absent without a fallback, not an integer of 64 bits) throws InputError "{what}: {key} is not
// an integer of 64 bits" (or "... has no {key}"), where `what` names the document.
inline int64_t json_int64_field(const nlohmann::json& j,
                                const std::string& key,
                                std::optional<int64_t> fallback,
                                const std::string& what) {
  if (!j.is_object()) throw InputError(fmt::format("{}: not a JSON object", what));
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw InputError(fmt::format("{}: has no {}", what, key));
  }
  const std::optional<int64_t> v = json_int64(j.at(key));
  if (!v) throw InputError(fmt::format("{}: {} is not an integer of 64 bits", what, key));
  return *v;
}

// v as an int64, or InputError "{what} is not an integer of 64 bits" (what names the value).
inline int64_t json_int64_value(const nlohmann::json& v, const std::string& what) {
  const std::optional<int64_t> i = json_int64(v);
  if (!i) throw InputError(fmt::format("{} is not an integer of 64 bits", what));
  return *i;
}

}  // namespace gpudays
