// `gpudays best` and `gpudays export`: the optimal measured row, and the exported HuggingFace and
// DeepSpeed configurations carrying the reference's fields.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "bench/export.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;
using test::run_gpudays;

std::string db_with_trials() {
  const std::string path = test::write_temp_file("export.db", "");
  std::filesystem::remove(path);
  ResultsDb db = ResultsDb::open({path});
  for (int64_t micro : {2, 4, 8}) {
    TrialRecord t;
    t.model = "pythia-160m";
    t.gpu = "a100-80gb-sxm";
    t.measured.device_name = "NVIDIA A100-SXM4-80GB";
    t.cluster.gpus_per_node = 4;
    t.config.methods.free_lunch = true;
    t.config.methods.sharding = Sharding::kZero2;
    t.config.methods.offloading = micro == 8;
    t.config.micro_batch_size = micro;
    t.config.grad_acc_steps = 256 / micro;
    test::set_measured_step(t, 10.0 / micro);  // micro-batch 8 is the fastest
    db.insert(t);
  }
  TrialRecord oom;
  oom.model = "pythia-160m";
  oom.gpu = "a100-80gb-sxm";
  oom.cluster.gpus_per_node = 4;
  oom.config.micro_batch_size = 16;
  oom.measured.status = TrialStatus::kOutOfMemory;
  db.insert(oom);
  return path;
}

TEST(Export, BestIsTheFastestSuccessfulTrial) {
  const std::string db = db_with_trials();
  const auto r = run_gpudays(
      "best --model pythia-160m --gpu a100 --gpus-per-node 4 --format json "
      "--db " +
      db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["best"];
  EXPECT_EQ(j["micro_batch_size"], 8);
  EXPECT_EQ(j["methods"], "free-lunch + zero_2 + offload");
}

TEST(Export, HuggingFaceAndDeepSpeedCarryTheReferenceFields) {
  const std::string db = db_with_trials();
  const auto hf = run_gpudays(
      "export --model pythia-160m --gpu a100 --gpus-per-node 4 --format hf "
      "--db " +
      db);
  ASSERT_EQ(hf.exit_code, 0) << hf.err;
  const auto args = nlohmann::json::parse(hf.out);
  for (const char* key : {"max_steps",
                          "per_device_train_batch_size",
                          "gradient_accumulation_steps",
                          "lr_scheduler_type",
                          "warmup_steps",
                          "gradient_checkpointing",
                          "bf16",
                          "fp16",
                          "tf32",
                          "fsdp",
                          "fsdp_config",
                          "deepspeed",
                          "torch_compile",
                          "max_grad_norm",
                          "ddp_find_unused_parameters"}) {
    EXPECT_TRUE(args.contains(key)) << key;
  }
  EXPECT_EQ(args["per_device_train_batch_size"], 8);
  EXPECT_EQ(args["gradient_accumulation_steps"], 32);
  EXPECT_EQ(args["fp16"], true);  // pythia-160m's recipe
  const auto& ds = args["deepspeed"];
  for (const char* key : {"train_batch_size",
                          "train_micro_batch_size_per_gpu",
                          "gradient_accumulation_steps",
                          "gradient_clipping",
                          "fp16",
                          "optimizer",
                          "zero_optimization"}) {
    EXPECT_TRUE(ds.contains(key)) << key;
  }
  EXPECT_EQ(ds["train_batch_size"], 1024);
  EXPECT_EQ(ds["zero_optimization"]["stage"], 2);
  EXPECT_EQ(ds["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  EXPECT_EQ(ds["fp16"]["loss_scale"], 0);

  const auto plain = run_gpudays(
      "export --model pythia-160m --gpu a100 --gpus-per-node 4 "
      "--format deepspeed --db " +
      db);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(nlohmann::json::parse(plain.out)["train_micro_batch_size_per_gpu"], 8);
}

TEST(Export, FsdpMapsToTrainingArgumentsFsdpOptions) {
  const ModelSpec& model = catalog().model("pythia-410m");
  ExportRequest e{&model, "h100-sxm", 1, 8, {}, true};
  e.config = Configuration{{true, true, Sharding::kFsdpFullShard, true}, 4, 32};
  const auto args = hf_training_arguments(e);
  EXPECT_EQ(args["fsdp"], "full_shard auto_wrap offload");
  EXPECT_TRUE(args["deepspeed"].is_null());
  EXPECT_EQ(args["gradient_checkpointing"], true);
  EXPECT_TRUE(deepspeed_config(e).is_null());
}

TEST(Export, MissingResultsAreOneLineErrors) {
  const auto r = run_gpudays("best --model pythia-160m --gpu a100 --db /nonexistent/gpudays.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no results database"), std::string::npos) << r.err;
  const auto e = run_gpudays(
      "export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan "
      "--format toml");
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("micro_batch_size = "), std::string::npos);
}

}  // namespace
}  // namespace gpudays
