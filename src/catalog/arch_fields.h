// One architecture field read through the family key map (family_traits.h), from any field
// source with the TomlFields getters (a model TOML table, a config.json object): the shared step
// of the model TOML, config.json and measurement readers.
#pragma once

#include <string_view>
#include <type_traits>
#include <variant>

#include "catalog/family_traits.h"

namespace gpudays {

// The value of a left-out key: the default's field, else its constant.
inline int64_t default_int(const KeyDefault& d, const ArchSpec& a) {
  return d.same_as != nullptr ? a.*d.same_as : static_cast<int64_t>(d.value);
}

// Sets the field to its default where it has one (the key absent); a required one is untouched.
inline void apply_default(const ArchMember& member, const KeyDefault& d, ArchSpec& a) {
  if (d.required) return;
  std::visit(
      [&](auto field) {
        using T = std::remove_reference_t<decltype(a.*field)>;
        if constexpr (std::is_same_v<T, int64_t>) a.*field = default_int(d, a);
        if constexpr (std::is_same_v<T, double>) a.*field = d.value;
        if constexpr (std::is_same_v<T, bool>) a.*field = d.value != 0.0;
      },
      member);
}

// Reads `key` into the field; a missing required key fails as `fields` reports it.
template <class Fields>
void read_arch_field(const Fields& fields,
                     std::string_view key,
                     const KeyDefault& d,
                     const ArchMember& member,
                     ArchSpec& a) {
  const std::string name(key);
  std::visit(
      [&](auto field) {
        using T = std::remove_reference_t<decltype(a.*field)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a.*field = d.required ? fields.get_int(name) : fields.get_int_or(name, default_int(d, a));
        } else if constexpr (std::is_same_v<T, double>) {
          a.*field = d.required ? fields.get_double(name) : fields.get_double_or(name, d.value);
        } else if constexpr (std::is_same_v<T, bool>) {
          a.*field = fields.get_bool_or(name, d.value != 0.0);  // every flag has a default
        } else {
          a.*field = fields.get_int_array(name);  // arrays are required
        }
      },
      member);
}

}  // namespace gpudays
