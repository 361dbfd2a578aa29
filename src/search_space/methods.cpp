// Names and parsing of the search-space methods.
#include "search_space/methods.h"

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

const std::vector<Sharding>& all_shardings() {
  static const std::vector<Sharding> kAll = {Sharding::kNone,
                                             Sharding::kZero1,
                                             Sharding::kZero2,
                                             Sharding::kZero3,
                                             Sharding::kFsdpShardGradOp,
                                             Sharding::kFsdpFullShard};
  return kAll;
}

std::string to_string(Sharding sharding) {
  switch (sharding) {
    case Sharding::kNone:
      return "none";
    case Sharding::kZero1:
      return "zero_1";
    case Sharding::kZero2:
      return "zero_2";
    case Sharding::kZero3:
      return "zero_3";
    case Sharding::kFsdpShardGradOp:
      return "fsdp_shard_grad_op";
    case Sharding::kFsdpFullShard:
      return "fsdp_full_shard";
  }
  return "?";
}

std::string to_string(MethodPreset preset) {
  switch (preset) {
    case MethodPreset::kNaive:
      return "naive";
    case MethodPreset::kFreeLunch:
      return "free-lunch";
    case MethodPreset::kAll:
      return "all";
  }
  return "?";
}

Sharding parse_sharding(const std::string& text) {
  std::vector<std::string> names;
  for (Sharding s : all_shardings()) {
    if (to_string(s) == text) return s;
    names.push_back(to_string(s));
  }
  throw InputError(fmt::format("unknown sharding '{}'; valid: {}", text, join_choices(names)));
}

MethodPreset parse_preset(const std::string& text) {
  for (MethodPreset p : {MethodPreset::kNaive, MethodPreset::kFreeLunch, MethodPreset::kAll}) {
    if (to_string(p) == text) return p;
  }
  throw InputError(
      fmt::format("unknown method preset '{}'; valid: naive, free-lunch or all", text));
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
  std::string out = m.free_lunch ? "free-lunch" : "plain";
  if (m.activation_checkpointing) out += " + ckpt";
  if (m.sharding != Sharding::kNone) out += " + " + to_string(m.sharding);
  if (m.offloading) out += " + offload";
  return out;
}

}  // namespace gpudays
