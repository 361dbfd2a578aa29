// Names and parsing of the search-space methods.
#include "search_space/methods.h"

#include "common/enum_names.h"
#include "search_space/method_fields.h"

namespace gpudays {

namespace {

constexpr EnumName<Sharding> kShardingNames[] = {
    {Sharding::kNone, "none"},
    {Sharding::kZero1, "zero_1"},
    {Sharding::kZero2, "zero_2"},
    {Sharding::kZero3, "zero_3"},
    {Sharding::kFsdpShardGradOp, "fsdp_shard_grad_op"},
    {Sharding::kFsdpFullShard, "fsdp_full_shard"},
};

constexpr EnumName<MethodPreset> kPresetNames[] = {
    {MethodPreset::kNaive, "naive"},
    {MethodPreset::kFreeLunch, "free-lunch"},
    {MethodPreset::kAll, "all"},
};

}  // namespace

const std::vector<Sharding>& all_shardings() {
  static const std::vector<Sharding> kAll = [] {
    std::vector<Sharding> all;
    for (const auto& e : kShardingNames) all.push_back(e.value);
    return all;
  }();
  return kAll;
}

std::vector<std::string> sharding_names() {
  return enum_names<Sharding>(kShardingNames);
}

std::string to_string(Sharding sharding) {
  return enum_name<Sharding>(kShardingNames, sharding);
}

std::string to_string(MethodPreset preset) {
  return enum_name<MethodPreset>(kPresetNames, preset);
}

Sharding parse_sharding(const std::string& text) {
  return parse_enum<Sharding>(kShardingNames, text, "sharding");
}

MethodPreset parse_preset(const std::string& text) {
  return parse_enum<MethodPreset>(kPresetNames, text, "method preset");
}

int sharding_stage(Sharding sharding) {
  switch (sharding) {
    case Sharding::kNone:
      return 0;
    case Sharding::kZero1:
      return 1;
    case Sharding::kZero2:
    case Sharding::kFsdpShardGradOp:
      return 2;
    case Sharding::kZero3:
    case Sharding::kFsdpFullShard:
      return 3;
  }
  return 0;
}

std::string describe(const MethodSet& m) {
  std::string out;
  for (const MethodField& f : method_fields()) {
    const bool set = !f.is_default(m);
    std::string part(set ? f.short_on : f.short_off);
    if (set && part.empty()) part = f.text(m);  // a choice: its name
    if (!part.empty()) out += (out.empty() ? "" : " + ") + part;
  }
  return out;
}

}  // namespace gpudays
