// transformers 4's TrainingArguments beside 5's, which transformers an export targets, and the
// export's accumulation pin and configurations predicted not to fit. TrainingArguments of both
// majors are built for real by tests/exports/export_consumers.py (hf, hf4).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "exports/export.h"
#include "exports/export_choice.h"
#include "exports/transformers_version.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;
using test::run_gpudays;

ExportRequest v4(const std::string& model, MethodSet methods) {
  ExportRequest e{&catalog().model(model), "h100-sxm", {1, 8}, {}, true};
  e.config = Configuration{methods, 4, 32};
  e.transformers_major = 4;
  return e;
}

TEST(ExportVersions, Transformers4IsFsdp1AndGradientCheckpointing) {
  const auto full =
      hf_training_arguments(v4("pythia-410m", {true, true, Sharding::kFsdpFullShard, true}));
  EXPECT_EQ(full["fsdp"], "full_shard auto_wrap offload");
  EXPECT_EQ(full["fsdp_config"]["transformer_layer_cls_to_wrap"],
            nlohmann::json::array({"GPTNeoXLayer"}));
  EXPECT_EQ(full["fsdp_config"]["activation_checkpointing"], true);
  EXPECT_FALSE(full["fsdp_config"].contains("version"));  // FSDP2 is transformers 5's
  EXPECT_EQ(full["gradient_checkpointing"], false);       // FSDP's own, not both
  EXPECT_FALSE(full.contains("activation_checkpointing"));
  const auto grad_op =
      hf_training_arguments(v4("pythia-410m", {false, false, Sharding::kFsdpShardGradOp, false}));
  EXPECT_EQ(grad_op["fsdp"], "shard_grad_op auto_wrap");
  const auto ddp = hf_training_arguments(v4("pythia-410m", {false, true, Sharding::kNone, false}));
  EXPECT_EQ(ddp["fsdp"], "");
  EXPECT_TRUE(ddp["fsdp_config"].is_null());
  EXPECT_EQ(ddp["gradient_checkpointing"], true);
}

TEST(ExportVersions, Transformers4WsdNamesItsStablePhaseAndNotesItsCosine) {
  const ExportRequest e = v4("smollm-135m", {false, false, Sharding::kZero1, false});
  const auto kwargs = hf_training_arguments(e)["lr_scheduler_kwargs"];
  EXPECT_EQ(kwargs["num_stable_steps"], 600000 - 2000 - 120000);
  EXPECT_EQ(kwargs["num_decay_steps"], 120000);
  EXPECT_FALSE(kwargs.contains("decay_type"));  // transformers 5's
  const std::vector<std::string> notes = hf_export_notes(e);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("by a cosine"), std::string::npos) << notes[0];
}

TEST(ExportVersions, MajorVersionsParse) {
  EXPECT_EQ(parse_transformers_major("4"), 4);
  EXPECT_EQ(parse_transformers_major("5"), 5);
  EXPECT_EQ(parse_transformers_major("4.47.1"), 4);
  for (const char* bad : {"6", "45", "x", "", "4x", "-4"}) {
    EXPECT_THROW(parse_transformers_major(bad), InputError) << bad;
  }
}

// A stand-in for python3 that prints `version` as importlib.metadata would.
std::string fake_python(const std::string& name, const std::string& version) {
  const std::string path = test::fresh_path(name);
  std::ofstream(path) << "#!/bin/sh\necho " << version << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST(ExportVersions, TheInstalledMajorIsTheDefault) {
  const TransformersTarget four = choose_transformers("", fake_python("py4", "4.42.3"));
  EXPECT_EQ(four.major, 4);
  EXPECT_NE(four.basis.find("4.42.3"), std::string::npos) << four.basis;
  EXPECT_EQ(choose_transformers("", fake_python("py5", "5.24.0")).major, 5);
  const TransformersTarget six = choose_transformers("", fake_python("py6", "6.0.0"));
  EXPECT_EQ(six.major, 5);
  EXPECT_NE(six.basis.find("neither"), std::string::npos) << six.basis;
  const TransformersTarget none = choose_transformers("", "/nonexistent/python3");
  EXPECT_EQ(none.major, 5);
  EXPECT_NE(none.basis.find("no transformers"), std::string::npos) << none.basis;
  EXPECT_EQ(choose_transformers("4", fake_python("py5b", "5.24.0")).major, 4);
}

const char* kPlanned = "export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan ";

TEST(ExportVersions, AccumulationPinsTheMicroBatchAndIsChecked) {
  const auto r = run_gpudays(std::string(kPlanned) + "--gradient-accumulation-steps 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto args = nlohmann::json::parse(r.out);
  EXPECT_EQ(args["gradient_accumulation_steps"], 16);
  EXPECT_EQ(args["per_device_train_batch_size"], 1024 / 4 / 16);
  const auto odd = run_gpudays(std::string(kPlanned) + "--gradient-accumulation-steps 3");
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_NE(odd.err.find("per-GPU batch is 256 (1024 over 4 GPUs), not a multiple of 3"),
            std::string::npos)
      << odd.err;
  const auto both =
      run_gpudays(std::string(kPlanned) + "--gradient-accumulation-steps 16 --micro-batch-size 4");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("micro-batch x accumulation = 256"), std::string::npos) << both.err;
  EXPECT_EQ(std::count(both.err.begin(), both.err.end(), '\n'), 1) << both.err;
}

TEST(ExportVersions, AConfigurationPredictedNotToFitIsExportedWithAWarning) {
  const auto r = run_gpudays(
      "export --model pythia-1b --gpu rtx-3090 --source plan --sharding none "
      "--checkpointing off --offloading off --micro-batch-size 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["per_device_train_batch_size"], 64);
  EXPECT_NE(r.err.find("warning: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is predicted not to fit (needs"), std::string::npos) << r.err;
  const auto ok = run_gpudays(std::string(kPlanned) + "--transformers 5");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.err.find("warning: "), std::string::npos) << ok.err;
}

TEST(ExportVersions, VersionFlagsBelongToTheHfFormat) {
  const auto r = run_gpudays(std::string(kPlanned) + "--format deepspeed --transformers 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("apply to --format hf alone"), std::string::npos) << r.err;
  const auto bad = run_gpudays(std::string(kPlanned) + "--transformers 3");
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace gpudays
