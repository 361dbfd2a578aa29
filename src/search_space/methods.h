// The vocabulary of the reference search space's methods: free-lunch, activation checkpointing,
// sharding stage, offloading, and the presets naive / free-lunch / all. Names, parsing and value
// equality only; which combinations are valid is search_space/search_space.h's, and how a method is
// switched on is engine/apply_methods.h's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpudays {

// fsdp_shard_grad_op and fsdp_full_shard are the reference's FSDP names; gpudays runs them with
// the same mechanisms as zero_2 and zero_3.
enum class Sharding { kNone, kZero1, kZero2, kZero3, kFsdpShardGradOp, kFsdpFullShard };
enum class MethodPreset { kNaive, kFreeLunch, kAll };

std::string to_string(Sharding sharding);
std::string to_string(MethodPreset preset);
Sharding parse_sharding(const std::string& text);  // throws InputError naming the choices
MethodPreset parse_preset(const std::string& text);
int sharding_stage(Sharding sharding);  // 0 (none) .. 3
const std::vector<Sharding>& all_shardings();
std::vector<std::string> sharding_names();  // none, zero_1, ... in all_shardings()' order

// Every format that reads or writes a method set (trial spec, run file, results, rows, pin flags)
// loops over its field table, search_space/method_fields.h: a new method is a member here and a
// row there.
struct MethodSet {
  bool free_lunch = false;  // TF32, fused attention, fast scan, fused AdamW, CUDA graphs
  bool activation_checkpointing = false;
  Sharding sharding = Sharding::kNone;
  bool offloading = false;  // optimizer state to CPU (and parameters at stage 3)
  bool operator==(const MethodSet&) const = default;
};

std::string describe(const MethodSet& methods);  // "free-lunch + ckpt + zero_2 + offload"

// Data parallelism without sharding: the engine all-reduces the gradients after the last
// micro-step in buckets of at most this many bytes (fp32), so that the step holds one bucket
// beside the gradients rather than a second copy of all of them; the planner counts the same.
inline constexpr int64_t kAllReduceBucketBytes = int64_t{64} * 1024 * 1024;

}  // namespace gpudays
