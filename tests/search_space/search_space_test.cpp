// The reference search space's validity rules.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "common/error.h"
#include "search_space/method_fields.h"
#include "search_space/search_space.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

std::string request_error(const char* model, const char* gpu, int64_t gpus, int64_t nodes = 1) {
  try {
    check_request(catalog().model(model), Cluster{{nodes, gpus}, &catalog().gpu(gpu)});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SearchSpace, BatchMustSplitIntoPowerOfTwoPerGpu) {
  EXPECT_EQ(request_error("pythia-1b", "a100", 4), "");
  EXPECT_NE(request_error("pythia-1b", "a100", 3).find("power-of-two per-GPU batch over 3 GPUs"),
            std::string::npos);
  EXPECT_NE(request_error("mamba", "a100", 8, 32).find("over 256 GPUs"), std::string::npos);
}

TEST(SearchSpace, Bf16NeedsAmpereOrNewer) {
  EXPECT_NE(request_error("pythia-1b", "v100", 1).find("bf16"), std::string::npos);
  EXPECT_EQ(request_error("pythia-1b", "rtx-3090", 1), "");
  EXPECT_EQ(request_error("pythia-410m", "v100", 1), "");  // fp16 recipe
}

// The one bf16 rule the planner and the engine share: compute capability 8.0 or newer; a CPU
// (capability 0) runs bf16 autocast.
TEST(SearchSpace, PrecisionRuleByComputeCapability) {
  EXPECT_NE(precision_problem(Precision::kBf16, "V100", 7.0).find("V100 has 7.0"),
            std::string::npos);
  EXPECT_EQ(precision_problem(Precision::kBf16, "A100", 8.0), "");
  EXPECT_EQ(precision_problem(Precision::kBf16, "host CPU", 0.0), "");
  EXPECT_EQ(precision_problem(Precision::kFp16, "V100", 7.0), "");
  EXPECT_EQ(precision_problem(Precision::kFp32, "T4", 7.5), "");
}

// Value equality: every field counts.
TEST(SearchSpace, ConfigurationsCompareByValue) {
  const Configuration base{{true, false, Sharding::kZero2, true}, 8, 4};
  EXPECT_EQ(base, (Configuration{{true, false, Sharding::kZero2, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{false, false, Sharding::kZero2, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, true, Sharding::kZero2, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kFsdpShardGradOp, true}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kZero2, false}, 8, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kZero2, true}, 16, 4}));
  EXPECT_NE(base, (Configuration{{true, false, Sharding::kZero2, true}, 8, 2}));
  EXPECT_EQ(describe(base), "free-lunch + zero_2 + offload, micro-batch 8, accumulation 4");
}

TEST(SearchSpace, ImpossibleCounts) {
  EXPECT_NE(request_error("pythia-1b", "a100", 0).find("GPUs per node"), std::string::npos);
  EXPECT_NE(request_error("pythia-1b", "a100", 1, 0).find("nodes must be"), std::string::npos);
}

TEST(SearchSpace, OffloadingNeedsShardingAndOneGpuShardsOnlyWithOffload) {
  const Cluster one{{1, 1}, &catalog().gpu("a100")};
  const Cluster four{{1, 4}, &catalog().gpu("a100")};
  EXPECT_NE(method_set_problem({false, false, Sharding::kNone, true}, 4), "");
  EXPECT_NE(method_set_problem({false, false, Sharding::kZero2, false}, 1), "");
  EXPECT_EQ(method_set_problem({false, false, Sharding::kZero2, true}, 1), "");
  EXPECT_EQ(method_set_problem({false, false, Sharding::kZero2, false}, 4), "");
  for (const MethodSet& m : enumerate_method_sets(MethodPreset::kAll, one)) {
    EXPECT_EQ(method_set_problem(m, one.world_size()), "");
  }
  for (const MethodSet& m : enumerate_method_sets(MethodPreset::kAll, four)) {
    EXPECT_EQ(method_set_problem(m, four.world_size()), "");
  }
}

TEST(SearchSpace, PresetSizes) {
  const Cluster one{{1, 1}, &catalog().gpu("a100")};
  const Cluster four{{1, 4}, &catalog().gpu("a100")};
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kNaive, four).size(), 1u);
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kFreeLunch, four).size(), 1u);
  // 2 free-lunch x 2 checkpointing x (none + 5 shardings x {off, on} offload) = 44.
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kAll, four).size(), 44u);
  // One GPU: 2 x 2 x (none + 5 shardings with offload) = 24.
  EXPECT_EQ(enumerate_method_sets(MethodPreset::kAll, one).size(), 24u);
}

TEST(SearchSpace, MicroBatchesArePowersOfTwoUpToThePerGpuBatch) {
  const Cluster four{{1, 4}, &catalog().gpu("a100")};
  const auto configs =
      enumerate_configs(catalog().model("pythia-1b"), four, MethodPreset::kFreeLunch);
  std::set<int64_t> micro;
  for (const Configuration& c : configs) {
    EXPECT_EQ(c.micro_batch_size * c.grad_acc_steps, 256);
    micro.insert(c.micro_batch_size);
  }
  EXPECT_EQ(micro, (std::set<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
}

// The method fields in MethodSet's order under the keys every format stores; each value's text
// reads back as the same value, and a text no field knows names the choices.
TEST(MethodFields, EveryValueSurvivesItsText) {
  std::vector<std::string> names;
  for (const MethodField& f : method_fields()) names.emplace_back(f.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "free_lunch", "activation_checkpointing", "sharding", "offloading"}));
  for (const MethodSet& m : every_method_set()) {
    for (const MethodField& f : method_fields()) {
      MethodSet back;
      f.set_text(back, f.text(m));
      EXPECT_TRUE(f.same(back, m)) << f.name << " " << describe(m);
    }
  }
  MethodSet m;
  EXPECT_THROW(method_field("sharding").set_text(m, "zero_9"), InputError);
  EXPECT_THROW(method_field("offloading").set_text(m, "yes"), InputError);
  EXPECT_THROW(method_field("fused_loss"), InputError);
  EXPECT_EQ(method_field_index(&MethodSet::sharding), 2u);
}

// Every combination once, the first field varying slowest: the order of the nested loops the
// search enumerated before the table (free-lunch, checkpointing, sharding, offloading).
TEST(MethodFields, EveryMethodSetInTheSearchOrder) {
  std::vector<MethodSet> nested;
  for (bool free_lunch : {false, true}) {
    for (bool ckpt : {false, true}) {
      for (Sharding sharding : all_shardings()) {
        for (bool offload : {false, true}) nested.push_back({free_lunch, ckpt, sharding, offload});
      }
    }
  }
  EXPECT_EQ(every_method_set(), nested);
  EXPECT_EQ(describe(MethodSet{}), "plain");
  EXPECT_EQ(describe(MethodSet{true, true, Sharding::kZero2, true}),
            "free-lunch + ckpt + zero_2 + offload");
  EXPECT_EQ(describe(MethodSet{.offloading = true}), "plain + offload");
}

// Names of the enumerations from one table each: to_string and parse agree, and a bad name
// lists the valid ones.
TEST(MethodFields, EnumNamesReadBack) {
  for (Sharding s : all_shardings()) EXPECT_EQ(parse_sharding(to_string(s)), s);
  for (MethodPreset p : {MethodPreset::kNaive, MethodPreset::kFreeLunch, MethodPreset::kAll}) {
    EXPECT_EQ(parse_preset(to_string(p)), p);
  }
  try {
    parse_sharding("zero_4");
    ADD_FAILURE() << "zero_4 parsed";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown sharding 'zero_4'; valid: none, zero_1, zero_2, zero_3, "
                 "fsdp_shard_grad_op or fsdp_full_shard");
  }
  try {
    parse_preset("some");
    ADD_FAILURE() << "some parsed";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "unknown method preset 'some'; valid: naive, free-lunch or all");
  }
}

// A pin set from text is the pin set by member, and matches what it names.
TEST(MethodFields, PinFromTextIsPinByMember) {
  ConfigurationPin by_text;
  by_text.pin_text(method_field("sharding"), "zero_2");
  by_text.pin_text(method_field("offloading"), "on");
  ConfigurationPin by_member;
  by_member.pin(&MethodSet::sharding, Sharding::kZero2).pin(&MethodSet::offloading, true);
  EXPECT_EQ(by_text, by_member);
  EXPECT_EQ(describe(by_text), "sharding zero_2, offloading on");
  EXPECT_TRUE(by_text.matches({{true, false, Sharding::kZero2, true}, 1, 1}));
  EXPECT_FALSE(by_text.matches({{true, false, Sharding::kZero2, false}, 1, 1}));
  EXPECT_TRUE(ConfigurationPin{}.empty());
  EXPECT_FALSE(by_text.empty());
}

// The fuzzers' dictionaries of the formats that hold method sets name every field and every
// choice of the table, so a new method reaches the fuzzers too (a dictionary is written by hand).
TEST(MethodFields, FuzzDictionariesNameEveryFieldAndChoice) {
  for (const char* dict : {"run_file.dict", "trial_spec.dict"}) {
    const std::string path = std::string(GPUDAYS_TEST_DATA_DIR) + "/../fuzz/" + dict;
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    for (const MethodField& f : method_fields()) {
      EXPECT_NE(text.find("\"" + std::string(f.name) + "\""), std::string::npos) << dict << f.name;
      if (f.kind() != MethodKind::kChoice) continue;
      for (const std::string& choice : f.choices()) {
        EXPECT_NE(text.find(choice), std::string::npos) << dict << " " << choice;
      }
    }
  }
}

}  // namespace
}  // namespace gpudays
