// The trial specification: it round-trips through JSON, and counts out of range are one
// InputError naming the key, before any product of them can overflow.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bench/trial_spec.h"
#include "common/error.h"

namespace gpudays {
namespace {

TrialSpec sample_spec() {
  TrialSpec s;
  s.model = "pythia-14m";
  s.device = "cpu";
  s.config = {{.free_lunch = true}, /*micro_batch_size=*/4, /*grad_acc_steps=*/8};
  s.timed_steps = 5;
  s.memory_limit_bytes = 1 << 30;
  return s;
}

TEST(TrialSpec, RoundTripsThroughJson) {
  const TrialSpec back = trial_spec_from_json(to_json(sample_spec()));
  EXPECT_EQ(back.model, "pythia-14m");
  EXPECT_EQ(back.config, sample_spec().config);
  EXPECT_EQ(back.timed_steps, 5);
  EXPECT_EQ(back.memory_limit_bytes, 1 << 30);
}

TEST(TrialSpec, CountsOutOfRangeAreOneInputErrorNamingTheKey) {
  const std::vector<std::pair<const char*, int64_t>> cases = {
      {"micro_batch_size", int64_t{1} << 62}, {"micro_batch_size", 0},
      {"grad_acc_steps", -4},                 {"grad_acc_steps", int64_t{1} << 40},
      {"timed_steps", 0},                     {"warmup_steps", -1},
      {"memory_limit_bytes", -1}};
  for (const auto& [key, value] : cases) {
    nlohmann::json j = to_json(sample_spec());
    j[key] = value;
    try {
      trial_spec_from_json(j);
      ADD_FAILURE() << key << " = " << value << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpudays
