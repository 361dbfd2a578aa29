// The method-set field table and the field's conversions to and from its text.
#include "search_space/method_fields.h"

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

// A new method: a member of MethodSet and a row here, in the member's place.
constexpr MethodField kFields[] = {
    {.name = "free_lunch",
     .label = "free-lunch",
     .help = "free-lunch",
     .short_on = "free-lunch",
     .short_off = "plain",
     .key_tag = "fl",
     .member = &MethodSet::free_lunch},
    {.name = "activation_checkpointing",
     .label = "checkpointing",
     .help = "activation checkpointing",
     .short_on = "ckpt",
     .key_tag = "ckpt",
     .member = &MethodSet::activation_checkpointing},
    {.name = "sharding", .label = "sharding", .help = "sharding", .member = &MethodSet::sharding},
    {.name = "offloading",
     .label = "offloading",
     .help = "CPU offloading",
     .short_on = "offload",
     .key_tag = "offload",
     .member = &MethodSet::offloading},
};

bool flag_from_text(std::string_view name, std::string_view text) {
  if (text == "on") return true;
  if (text == "off") return false;
  throw InputError(fmt::format("unknown {} '{}'; valid: on or off", name, text));
}

}  // namespace

MethodKind MethodField::kind() const {
  return std::holds_alternative<bool MethodSet::*>(member) ? MethodKind::kFlag
                                                           : MethodKind::kChoice;
}

bool MethodField::flag(const MethodSet& m) const {
  return m.*std::get<bool MethodSet::*>(member);
}

void MethodField::set_flag(MethodSet& m, bool on) const {
  m.*std::get<bool MethodSet::*>(member) = on;
}

std::string MethodField::text(const MethodSet& m) const {
  if (kind() == MethodKind::kFlag) return flag(m) ? "on" : "off";
  return to_string(m.*std::get<Sharding MethodSet::*>(member));
}

void MethodField::set_text(MethodSet& m, std::string_view text) const {
  if (kind() == MethodKind::kFlag) {
    set_flag(m, flag_from_text(label, text));
  } else {
    m.*std::get<Sharding MethodSet::*>(member) = parse_sharding(std::string(text));
  }
}

std::vector<std::string> MethodField::choices() const {
  if (kind() == MethodKind::kFlag) return {"off", "on"};
  return sharding_names();
}

bool MethodField::is_default(const MethodSet& m) const {
  return same(m, MethodSet{});
}

bool MethodField::same(const MethodSet& a, const MethodSet& b) const {
  return std::visit([&](auto field) { return a.*field == b.*field; }, member);
}

std::span<const MethodField> method_fields() {
  return kFields;
}

size_t method_field_index(MethodMember member) {
  for (size_t i = 0; i < std::size(kFields); ++i) {
    if (kFields[i].member == member) return i;
  }
  throw std::logic_error("a MethodSet member without a row in the method field table");
}

const MethodField& method_field(std::string_view name) {
  std::vector<std::string> names;
  for (const MethodField& f : kFields) {
    if (f.name == name) return f;
    names.emplace_back(f.name);
  }
  throw InputError(fmt::format("unknown method field '{}'; valid: {}", name, join_choices(names)));
}

std::vector<MethodSet> every_method_set() {
  std::vector<MethodSet> sets = {MethodSet{}};
  for (const MethodField& f : kFields) {
    std::vector<MethodSet> longer;
    for (const MethodSet& m : sets) {
      for (const std::string& value : f.choices()) {
        MethodSet with = m;
        f.set_text(with, value);
        longer.push_back(with);
      }
    }
    sets = std::move(longer);
  }
  return sets;
}

}  // namespace gpudays
