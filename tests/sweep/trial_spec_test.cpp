// The trial's JSON contract: a spec survives to_json and back; a spec outside what the runner
// relies on (found by the trial_spec fuzz target: sizes below 1, a micro-batch x accumulation
// product that overflows, negative step counts) is one InputError line, and `gpudays trial`
// would exit 2 on it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "search_space/method_fields.h"
#include "sweep/trial_spec.h"

namespace gpudays {
namespace {

TrialSpec sample_spec() {
  TrialSpec s;
  s.model = "pythia-14m";
  s.device = "cpu";
  s.config.micro_batch_size = 4;
  s.config.grad_acc_steps = 2;
  s.timing = StepTiming::kParts;
  s.check_steps = 2;
  return s;
}

// The InputError message of parsing `spec` with `key` set to `value`.
std::string error_with(const char* key, int64_t value) {
  nlohmann::json j = to_json(sample_spec());
  j[key] = value;
  try {
    trial_spec_from_json(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(TrialSpec, SurvivesJsonAndBack) {
  TrialSpec s = sample_spec();
  EXPECT_EQ(to_json(trial_spec_from_json(to_json(s))), to_json(s));
  EXPECT_FALSE(to_json(s).contains("profile"));  // none unless asked for
  s.profile_path = "profile.json";               // in the working folder
  EXPECT_EQ(trial_spec_from_json(to_json(s)).profile_path, "profile.json");
}

// A profile path that cannot be written is refused with the specification, before the trial runs.
TEST(TrialSpec, AProfileWithoutAFolderOrAFileNameIsOneLineError) {
  for (const std::string bad : {"/no-such-folder/p.json", "trace/", "", "."}) {
    nlohmann::json j = to_json(sample_spec());
    j["profile"] = bad;
    if (bad.empty()) {
      EXPECT_EQ(trial_spec_from_json(j).profile_path, "");  // empty: no profile
      continue;
    }
    try {
      trial_spec_from_json(j);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("profile"), std::string::npos) << e.what();
    }
  }
  nlohmann::json j = to_json(sample_spec());
  j["profile"] = 5;
  EXPECT_THROW(trial_spec_from_json(j), InputError);
}

TEST(TrialSpec, SizesAndStepsOutOfRangeAreOneLineErrors) {
  const std::vector<std::pair<const char*, int64_t>> bad = {{"micro_batch_size", 0},
                                                            {"micro_batch_size", -3},
                                                            {"grad_acc_steps", 0},
                                                            {"grad_acc_steps", int64_t{1} << 62},
                                                            {"warmup_steps", -1},
                                                            {"timed_steps", 0},
                                                            {"check_steps", -1},
                                                            {"memory_limit_bytes", -1},
                                                            {"timed_steps", int64_t{1} << 40}};
  for (const auto& [key, value] : bad) {
    const std::string message = error_with(key, value);
    EXPECT_NE(message.find(key), std::string::npos) << key << " = " << value << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// micro_batch_size near 2^62 with 4 accumulation steps wrapped the runner's batch check.
TEST(TrialSpec, AProductThatWouldOverflowIsRefused) {
  nlohmann::json j = to_json(sample_spec());
  j["micro_batch_size"] = int64_t{1} << 62;
  j["grad_acc_steps"] = 4;
  EXPECT_THROW(trial_spec_from_json(j), InputError);
  j["micro_batch_size"] = int64_t{1} << 15;
  j["grad_acc_steps"] = int64_t{1} << 15;
  EXPECT_NO_THROW(trial_spec_from_json(j));  // 2^30, the largest global batch
}

// A number beyond int64_t (the fuzzer's 49223372036854775807, read as 4.9e19) or a fraction was
// converted to int64_t, which is undefined behaviour; each is now a one-line error naming the key.
TEST(TrialSpec, IntegersBeyondSixtyFourBitsOrFractionsAreRefused) {
  for (const char* text : {"49223372036854775807", "18446744073709551615", "2.5", "1e3"}) {
    nlohmann::json j = to_json(sample_spec());
    j["micro_batch_size"] = nlohmann::json::parse(text);
    try {
      trial_spec_from_json(j);
      ADD_FAILURE() << text << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("micro_batch_size"), std::string::npos) << e.what();
    }
  }
}

// The same for a trial's result line (found by the trial_spec fuzz target: a peak memory of
// 1.0e23 bytes was converted to int64_t); integers the result reports are read as integers.
TEST(TrialSpec, AResultsIntegerThatIsNotOneIsAOneLineError) {
  for (const char* key : {"peak_memory_bytes", "steps_timed"}) {
    for (const char* text : {"1.01845e+23", "2.5", "18446744073709551615"}) {
      const std::string line = std::string(R"({"status": "ok", ")") + key + "\": " + text + "}";
      try {
        parse_trial_output(line);
        ADD_FAILURE() << line << " accepted";
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  std::string("the trial's result: ") + key + " is not an integer of 64 bits");
      }
    }
  }
  EXPECT_EQ(parse_trial_output(R"({"status": "ok", "peak_memory_bytes": 4096})").peak_memory_bytes,
            4096);
}

// Every method set reads back equal, under the field table's keys: flags as JSON booleans, a
// choice as its name.
TEST(TrialSpec, EveryMethodSetSurvivesJsonAndBack) {
  for (const MethodSet& m : every_method_set()) {
    TrialSpec s = sample_spec();
    s.config.methods = m;
    const nlohmann::json j = to_json(s);
    EXPECT_EQ(trial_spec_from_json(j).config, s.config) << describe(m);
    EXPECT_EQ(j.at("free_lunch"), m.free_lunch);
    EXPECT_EQ(j.at("activation_checkpointing"), m.activation_checkpointing);
    EXPECT_EQ(j.at("sharding"), to_string(m.sharding));
    EXPECT_EQ(j.at("offloading"), m.offloading);
  }
  nlohmann::json missing = to_json(sample_spec());
  missing.erase("offloading");
  EXPECT_THROW(trial_spec_from_json(missing), InputError);
}

}  // namespace
}  // namespace gpudays
