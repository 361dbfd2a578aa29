// The fields of MethodSet, listed once: the key every format stores a field under (trial spec
// JSON, the run file's [methods], the results column, the row column), its pin flag and the words
// of descriptions and of the trial key. Torch-free and format-free: each format's code loops over
// method_fields() and reads or writes a field as a flag or as its text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "search_space/methods.h"

namespace gpudays {

// kFlag: a bool, "on" / "off" on the command line; kChoice: one of named values (sharding).
enum class MethodKind { kFlag, kChoice };

// The MethodSet member a field reads and writes; a new kind of choice adds its enum here.
using MethodMember = std::variant<bool MethodSet::*, Sharding MethodSet::*>;

struct MethodField {
  std::string_view name;       // key in JSON, TOML and SQL, row column: "activation_checkpointing"
  std::string_view label;      // pin flag --LABEL, and describe(pin): "checkpointing"
  std::string_view help;       // what the pin flag's help calls it: "activation checkpointing"
  std::string_view short_on;   // describe(MethodSet) when not default: "ckpt" ("": the value)
  std::string_view short_off;  // ... when default: "plain" ("": nothing)
  std::string_view key_tag;    // trial key: "ckpt" gives "ckpt=1"; "": the value alone
  MethodMember member;
  // The results schema that added its column (results/results_db.cpp takes the largest as its
  // version). A field newer than schema 1 appears in the trial key only when not default, so that
  // the trials stored before it keep their keys.
  int64_t results_since = 1;

  MethodKind kind() const;
  bool flag(const MethodSet& m) const;         // a kFlag's value
  void set_flag(MethodSet& m, bool on) const;  // a kFlag's value
  std::string text(const MethodSet& m) const;  // a choice's name; a flag's "on" / "off"
  void set_text(MethodSet& m, std::string_view text) const;  // throws InputError naming choices
  std::vector<std::string> choices() const;  // every value's text, the default first
  bool is_default(const MethodSet& m) const;
  bool same(const MethodSet& a, const MethodSet& b) const;
};

// In the order of MethodSet's members, which is the order of every format's keys.
std::span<const MethodField> method_fields();

// The position in method_fields() of the field of `member`:
// method_field_index(&MethodSet::sharding).
size_t method_field_index(MethodMember member);

// The field keyed `name`; throws InputError naming the keys.
const MethodField& method_field(std::string_view name);

// Every method set the fields' values make, in order (the first field varies slowest).
std::vector<MethodSet> every_method_set();

}  // namespace gpudays
