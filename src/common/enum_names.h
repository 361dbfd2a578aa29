// Names of an enumeration's values from one table of {value, name} pairs: to_string and parse
// both read it, and a failed parse names every valid choice. The tables are each enum's owner's.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace gpudays {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

// Every name of the table, in its order.
template <typename Enum>
std::vector<std::string> enum_names(std::span<const EnumName<Enum>> table) {
  std::vector<std::string> names;
  for (const EnumName<Enum>& e : table) names.emplace_back(e.name);
  return names;
}

// "?" for a value the table lacks.
template <typename Enum>
std::string enum_name(std::span<const EnumName<Enum>> table, Enum value) {
  for (const EnumName<Enum>& e : table) {
    if (e.value == value) return std::string(e.name);
  }
  return "?";
}

// Throws InputError "unknown WHAT 'TEXT'; valid: a, b or c".
template <typename Enum>
Enum parse_enum(std::span<const EnumName<Enum>> table,
                std::string_view text,
                std::string_view what) {
  for (const EnumName<Enum>& e : table) {
    if (e.name == text) return e.value;
  }
  throw InputError("unknown " + std::string(what) + " '" + std::string(text) +
                   "'; valid: " + join_choices(enum_names(table)));
}

}  // namespace gpudays
