// `gpudays best` and `gpudays export`: the optimal measured row, and the exported HuggingFace and
// DeepSpeed configurations carrying the reference's fields.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "exports/export.h"
#include "process_dir.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;
using test::run_gpudays;

std::string db_with_trials() {
  const std::string path = test::write_temp_file("export.db", "");
  std::filesystem::remove(path);
  ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
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
    test::set_measured_step(t, 100.0 / micro);  // micro-batch 8 is the fastest
    db.insert(t);
  }
  TrialRecord oom;
  oom.model = "pythia-160m";
  oom.gpu = "a100-80gb-sxm";
  oom.cluster.gpus_per_node = 4;
  oom.config.micro_batch_size = 16;
  oom.measured.status = TrialStatus::kOutOfMemory;
  test::derive_figures(oom);
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
                          "activation_checkpointing",
                          "optim",
                          "torch_compile_mode",
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
                          "scheduler",
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

ExportRequest request(const std::string& model, MethodSet methods, bool tf32 = true) {
  ExportRequest e{&catalog().model(model), "h100-sxm", {1, 8}, {}, tf32};
  e.config = Configuration{methods, 4, 32};
  return e;
}

TEST(Export, FsdpIsTransformers5FsdpConfigNamingTheLayerClass) {
  const auto args =
      hf_training_arguments(request("pythia-410m", {true, true, Sharding::kFsdpFullShard, true}));
  EXPECT_EQ(args["fsdp"], true);  // the string form is deprecated
  const auto& config = args["fsdp_config"];
  EXPECT_EQ(config["version"], 2);
  EXPECT_EQ(config["reshard_after_forward"], true);
  EXPECT_EQ(config["cpu_offload"], true);
  EXPECT_EQ(config["transformer_layer_cls_to_wrap"], nlohmann::json::array({"GPTNeoXLayer"}));
  // FSDP checkpoints its own units; the Trainer's flag would add an all-gather.
  EXPECT_EQ(config["activation_checkpointing"], true);
  EXPECT_EQ(args["activation_checkpointing"], false);
  EXPECT_FALSE(args.contains("gradient_checkpointing"));  // deprecated in transformers 5
  EXPECT_TRUE(args["deepspeed"].is_null());
  const auto grad_op = hf_training_arguments(
      request("pythia-410m", {false, false, Sharding::kFsdpShardGradOp, false}));
  EXPECT_EQ(grad_op["fsdp_config"]["reshard_after_forward"], false);
}

TEST(Export, EveryFamilyWrapsItsRealLayerClass) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"pythia-160m", "GPTNeoXLayer"},
      {"roberta", "RobertaLayer"},
      {"vit", "ViTLayer"},
      {"convnext-large-1k", "ConvNextLayer"},
      {"mamba", "MambaBlock"}};
  for (const auto& [model, layer] : expected) {
    const auto args =
        hf_training_arguments(request(model, {false, false, Sharding::kFsdpFullShard, false}));
    EXPECT_EQ(args["fsdp_config"]["transformer_layer_cls_to_wrap"][0], layer) << model;
  }
}

// The bug: one "adam" recipe exported as DeepSpeed "Adam" (L2) and HF's default AdamW.
TEST(Export, OneRecipeIsOneOptimizerInBothForms) {
  for (const char* model : {"pythia-160m", "roberta", "vit", "convnext-large-1k", "mamba"}) {
    const auto args =
        hf_training_arguments(request(model, {false, false, Sharding::kZero2, false}));
    EXPECT_EQ(args["optim"], "adamw_torch") << model;
    EXPECT_EQ(args["deepspeed"]["optimizer"]["type"], "AdamW") << model;
    EXPECT_FALSE(args["deepspeed"]["optimizer"]["params"].contains("adam_w_mode")) << model;
    EXPECT_EQ(args["deepspeed"]["optimizer"]["params"]["weight_decay"], args["weight_decay"]);
  }
  // A model file's L2 Adam stays L2 where DeepSpeed can say so, and is noted where HF cannot.
  ModelSpec l2 = catalog().model("pythia-160m");
  l2.recipe.optimizer = OptimizerKind::kAdam;
  ExportRequest e = request("pythia-160m", {false, false, Sharding::kZero2, false});
  e.model = &l2;
  EXPECT_EQ(deepspeed_config(e)["optimizer"]["type"], "Adam");
  EXPECT_EQ(deepspeed_config(e)["optimizer"]["params"]["adam_w_mode"], false);
  EXPECT_TRUE(export_notes(e).empty());
  e.config.methods.sharding = Sharding::kNone;
  ASSERT_EQ(export_notes(e).size(), 1u);
  EXPECT_NE(export_notes(e)[0].find("adds its weight decay"), std::string::npos);
  EXPECT_EQ(hf_training_arguments(e)["optim"], "adamw_torch");
}

TEST(Export, DeepSpeedSchedulerFollowsTheRecipe) {
  const auto cosine =
      deepspeed_config(request("pythia-160m", {false, false, Sharding::kZero1, false}));
  EXPECT_EQ(cosine["scheduler"]["type"], "WarmupCosineLR");
  EXPECT_EQ(cosine["scheduler"]["params"]["total_num_steps"], 143000);
  EXPECT_EQ(cosine["scheduler"]["params"]["warmup_num_steps"], 1430);
  EXPECT_EQ(cosine["scheduler"]["params"]["warmup_type"], "linear");
  EXPECT_NEAR(cosine["scheduler"]["params"]["cos_min_ratio"].get<double>(), 0.1, 1e-12);
  const auto linear = deepspeed_config(request("roberta", {false, false, Sharding::kZero3, false}));
  EXPECT_EQ(linear["scheduler"]["type"], "WarmupDecayLR");
  EXPECT_EQ(linear["scheduler"]["params"]["warmup_max_lr"], 4e-4);
  EXPECT_EQ(linear["scheduler"]["params"]["warmup_num_steps"], 30000);
}

// DeepSpeed has no warmup-stable-decay: its configuration leaves the schedule to the Trainer's
// warmup_stable_decay, and the export says so.
TEST(Export, WsdIsTheTrainersSchedule) {
  const ExportRequest e = request("smollm-135m", {false, false, Sharding::kZero1, false});
  const auto args = hf_training_arguments(e);
  EXPECT_EQ(args["lr_scheduler_type"], "warmup_stable_decay");
  EXPECT_EQ(args["lr_scheduler_kwargs"]["num_decay_steps"], 120000);
  EXPECT_EQ(args["lr_scheduler_kwargs"]["decay_type"], "linear");
  EXPECT_EQ(args["lr_scheduler_kwargs"]["min_lr_ratio"], 0.0);
  EXPECT_FALSE(deepspeed_config(e).contains("scheduler"));
  const std::vector<std::string> notes = export_notes(e);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no warmup-stable-decay"), std::string::npos);
}

TEST(Export, AutoLeavesTheTrainersValuesToIt) {
  ExportRequest e = request("pythia-160m", {true, false, Sharding::kZero2, false});
  e.auto_values = true;
  const auto ds = deepspeed_config(e);
  for (const char* key : {"train_batch_size",
                          "train_micro_batch_size_per_gpu",
                          "gradient_accumulation_steps",
                          "gradient_clipping"}) {
    EXPECT_EQ(ds[key], "auto") << key;
  }
  EXPECT_EQ(ds["fp16"]["enabled"], "auto");
  EXPECT_EQ(ds["optimizer"]["params"]["lr"], "auto");
  EXPECT_EQ(ds["optimizer"]["params"]["betas"], "auto");
  EXPECT_EQ(ds["scheduler"]["params"]["total_num_steps"], "auto");
  EXPECT_EQ(ds["zero_optimization"]["stage"], 2);  // not a Trainer value
  e.auto_values = false;
  EXPECT_EQ(deepspeed_config(e)["train_batch_size"], 1024);
}

// What the CLI chooses (--torch-compile, measured free-lunch): export_versions_test.cpp.
ExportRequest compiled(const std::string& model, MethodSet methods, bool tf32 = true) {
  ExportRequest e = request(model, methods, tf32);
  e.torch_compile = methods.free_lunch;
  return e;
}

TEST(Export, CompileModeIsWhatFreeLunchMeans) {
  const auto graphs = hf_training_arguments(compiled("pythia-160m", {true, false, {}, false}));
  EXPECT_EQ(graphs["torch_compile"], true);
  EXPECT_EQ(graphs["torch_compile_mode"], "reduce-overhead");  // CUDA graphs
  EXPECT_EQ(graphs["optim"], "adamw_torch_fused");
  EXPECT_EQ(graphs["tf32"], true);
  const auto ckpt = hf_training_arguments(compiled("pythia-160m", {true, true, {}, false}));
  EXPECT_EQ(ckpt["torch_compile_mode"], "default");  // gpudays runs no graphs under checkpointing
  EXPECT_EQ(ckpt["activation_checkpointing"], true);
  const auto naive = hf_training_arguments(request("pythia-160m", {false, false, {}, false}));
  EXPECT_EQ(naive["torch_compile"], false);
  EXPECT_TRUE(naive["torch_compile_mode"].is_null());
  EXPECT_EQ(naive["tf32"], false);
  EXPECT_EQ(hf_training_arguments(compiled("pythia-160m", {true, false, {}, false}, false))["tf32"],
            false);
}

TEST(Export, WhatTheTargetCannotExpressIsNoted) {
  const auto mamba = export_notes(request("mamba", {true, false, Sharding::kZero2, false}));
  ASSERT_EQ(mamba.size(), 1u);
  EXPECT_NE(mamba[0].find("mamba-ssm"), std::string::npos);
  EXPECT_TRUE(export_notes(request("mamba", {false, false, Sharding::kZero2, false})).empty());
  const ExportRequest convnext =
      request("convnext-large-1k", {false, true, Sharding::kZero2, false});
  EXPECT_EQ(hf_training_arguments(convnext)["activation_checkpointing"], false);
  ASSERT_EQ(export_notes(convnext).size(), 1u);
  EXPECT_NE(export_notes(convnext)[0].find("ConvNeXt"), std::string::npos);
  const ExportRequest fsdp =
      request("convnext-large-1k", {false, true, Sharding::kFsdpFullShard, false});
  EXPECT_TRUE(export_notes(fsdp).empty());
  EXPECT_EQ(hf_training_arguments(fsdp)["fsdp_config"]["activation_checkpointing"], true);
}

const char* kPlanned = "export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan ";

TEST(Export, BackendChoosesAmongTheConfigurationsItRuns) {
  // FSDP rows tie with zero_2/zero_3 and the default takes ZeRO; --backend fsdp exports FSDP.
  const auto fsdp = run_gpudays(std::string(kPlanned) + "--backend fsdp");
  ASSERT_EQ(fsdp.exit_code, 0) << fsdp.err;
  const auto f = nlohmann::json::parse(fsdp.out);
  EXPECT_EQ(f["fsdp"], true);
  EXPECT_TRUE(f["deepspeed"].is_null());
  const auto ddp = run_gpudays(std::string(kPlanned) + "--backend ddp");
  ASSERT_EQ(ddp.exit_code, 0) << ddp.err;
  const auto d = nlohmann::json::parse(ddp.out);
  EXPECT_EQ(d["fsdp"], false);
  EXPECT_TRUE(d["deepspeed"].is_null());
  const auto ds = run_gpudays(std::string(kPlanned) + "--backend deepspeed --format deepspeed");
  ASSERT_EQ(ds.exit_code, 0) << ds.err;
  EXPECT_TRUE(nlohmann::json::parse(ds.out).contains("zero_optimization"));
  // --format deepspeed alone takes the fastest ZeRO configuration.
  EXPECT_EQ(run_gpudays(std::string(kPlanned) + "--format deepspeed").exit_code, 0);
}

TEST(Export, PinnedFieldsFixTheConfiguration) {
  const auto r = run_gpudays(std::string(kPlanned) +
                             "--sharding zero_3 --micro-batch-size 4 --checkpointing on "
                             "--offloading on --free-lunch off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto args = nlohmann::json::parse(r.out);
  EXPECT_EQ(args["per_device_train_batch_size"], 4);
  EXPECT_EQ(args["gradient_accumulation_steps"], 64);
  EXPECT_EQ(args["activation_checkpointing"], true);
  EXPECT_EQ(args["torch_compile"], false);
  EXPECT_EQ(args["deepspeed"]["zero_optimization"]["stage"], 3);
  EXPECT_EQ(args["deepspeed"]["zero_optimization"]["offload_param"]["device"], "cpu");
  const auto fsdp = run_gpudays(std::string(kPlanned) + "--sharding zero_2 --backend fsdp");
  EXPECT_EQ(fsdp.exit_code, 2);
  EXPECT_NE(fsdp.err.find("backend fsdp"), std::string::npos) << fsdp.err;
  EXPECT_EQ(std::count(fsdp.err.begin(), fsdp.err.end(), '\n'), 1) << fsdp.err;
  const auto bad = run_gpudays(std::string(kPlanned) + "--backend megatron");
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(Export, PinsAndBackendSelectAmongStoredTrials) {
  const std::string db = db_with_trials();
  const std::string base = "export --model pythia-160m --gpu a100 --gpus-per-node 4 --db " + db;
  const auto pinned = run_gpudays(base + " --micro-batch-size 4");  // not the fastest (8)
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  EXPECT_EQ(nlohmann::json::parse(pinned.out)["per_device_train_batch_size"], 4);
  const auto fsdp = run_gpudays(base + " --backend fsdp");  // only zero_2 trials are stored
  EXPECT_EQ(fsdp.exit_code, 2);
  EXPECT_NE(fsdp.err.find("(backend fsdp) (or use --source plan)"), std::string::npos) << fsdp.err;
}

TEST(Export, MeasuredFreeLunchIsCompiledPlannedIsNot) {
  const std::string base = "export --model pythia-160m --gpu a100 --gpus-per-node 4 ";
  const auto measured = run_gpudays(base + "--transformers 5 --db " + db_with_trials());
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  EXPECT_EQ(nlohmann::json::parse(measured.out)["torch_compile"], true);
  const auto planned = run_gpudays(base + "--transformers 5 --source plan --free-lunch on");
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  EXPECT_EQ(nlohmann::json::parse(planned.out)["torch_compile"], false);
  EXPECT_NE(planned.err.find("note: torch_compile is off"), std::string::npos) << planned.err;
  const auto asked =
      run_gpudays(base + "--transformers 5 --source plan --free-lunch on --torch-compile on");
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_EQ(nlohmann::json::parse(asked.out)["torch_compile"], true);
  const auto mamba = run_gpudays(
      "export --model mamba --gpu h100 --gpus-per-node 8 --source plan --torch-compile on");
  EXPECT_EQ(mamba.exit_code, 2);
  EXPECT_NE(mamba.err.find("Mamba is never exported compiled"), std::string::npos) << mamba.err;
  EXPECT_EQ(std::count(mamba.err.begin(), mamba.err.end(), '\n'), 1) << mamba.err;
}

TEST(Export, NotesGoToStandardError) {
  const auto r = run_gpudays(
      "export --model mamba --gpu h100 --gpus-per-node 8 --source plan --free-lunch on");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: free-lunch's fused selective scan"), std::string::npos) << r.err;
  EXPECT_NO_THROW(nlohmann::json::parse(r.out));
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

// --out that is one of the inputs (the model file, also through a hard link) or lies in the
// catalog is refused before anything is written: exit 2, one line, the input's bytes as they were.
TEST(Export, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  const std::string dir = test::process_temp_dir().fresh_dir("export-same");
  const std::string model = dir + "/same.toml";
  std::filesystem::copy_file(catalog().config_dir() + "/models/pythia-160m.toml", model);
  std::filesystem::create_hard_link(model, dir + "/linked.toml");
  const std::string bytes = test::read_file(model);
  const std::string plan = "export --model-file " + model + " --gpu a100 --source plan --format ";
  for (const std::string& args : {plan + "toml --out " + model,
                                  plan + "hf --out " + model,
                                  plan + "toml --out " + dir + "/linked.toml",
                                  plan + "toml --out " + dir + "/../export-same/same.toml"}) {
    const auto r = run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("same.toml is an input and an output (--out "), std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(test::read_file(model), bytes) << args;
  }
  const std::string catalog_dir = test::process_temp_dir().fresh_dir("export-catalog");
  std::filesystem::copy(
      catalog().config_dir(),
      catalog_dir,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  const auto in_catalog = run_gpudays("--config-dir " + catalog_dir + " " + plan + "toml --out " +
                                      catalog_dir + "/models/run.toml");
  EXPECT_EQ(in_catalog.exit_code, 2) << in_catalog.err;
  EXPECT_NE(in_catalog.err.find("is inside the catalog's " + catalog_dir + "/models"),
            std::string::npos)
      << in_catalog.err;
  EXPECT_FALSE(std::filesystem::exists(catalog_dir + "/models/run.toml"));
  // Beside the folders the catalog reads (a run file kept with it) is not one of its inputs.
  const auto beside = run_gpudays("--config-dir " + catalog_dir + " " + plan + "toml --out " +
                                  catalog_dir + "/run.toml");
  EXPECT_EQ(beside.exit_code, 0) << beside.err;
}

// An empty --out, or a directory, is refused (not taken as standard output).
TEST(Export, AnEmptyOrDirectoryOutIsRefused) {
  const std::string dir = test::process_temp_dir().fresh_dir("export-empty");
  const std::string plan = "export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan";
  const auto r = run_gpudays(plan + " --out ''");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "gpudays: error: --out is empty; name the file to write\n");
  EXPECT_EQ(r.out, "");
  const auto d = run_gpudays(plan + " --out " + dir + "/");
  EXPECT_EQ(d.exit_code, 2) << d.err;
  EXPECT_NE(d.err.find("names a directory"), std::string::npos) << d.err;
  const auto existing = run_gpudays(plan + " --out " + dir);
  EXPECT_EQ(existing.exit_code, 2) << existing.err;
  EXPECT_NE(existing.err.find("is a directory"), std::string::npos) << existing.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A write-protected --out is not replaced (exit 1, as a read-only directory: the file cannot be
// written; as root too, whose write permission the mode's missing write bits stand for); a file
// that is replaced keeps its mode.
TEST(Export, AWriteProtectedOutIsKeptAndAReplacedOneKeepsItsMode) {
  const std::string dir = test::process_temp_dir().fresh_dir("export-modes");
  const std::string plan =
      "export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan --format deepspeed";
  const std::string ro = dir + "/ro.json";
  std::ofstream(ro) << "{\"keep\": 1}\n";
  ::chmod(ro.c_str(), 0444);
  const auto r = run_gpudays(plan + " --out " + ro);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err,
            "gpudays: error: cannot replace " + ro +
                ": it is write-protected (mode 0444); make it writable or choose another file\n");
  EXPECT_EQ(test::read_file(ro), "{\"keep\": 1}\n");
  EXPECT_EQ(mode_of(ro), 0444u);
  const std::string priv = dir + "/private.json";
  std::ofstream(priv) << "{}\n";
  ::chmod(priv.c_str(), 0600);
  const auto replaced = run_gpudays(plan + " --out " + priv);
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(test::read_file(priv).find("zero_optimization"), std::string::npos);
  EXPECT_EQ(mode_of(priv), 0600u);
  const auto files = std::distance(std::filesystem::directory_iterator(dir),
                                   std::filesystem::directory_iterator());
  EXPECT_EQ(files, 2) << "no temporary file is left beside the outputs";
}

}  // namespace
}  // namespace gpudays
