// The run file: what `export --format toml` writes reads back as the same configuration with the
// recipe's schedule; unknown keys are errors. Checkpoint directories: a committed checkpoint checks
// out; a truncated or corrupted file or a missing manifest makes the newest checkpoint be skipped
// for the previous one, with a message; pruning keeps the newest K.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "../process_dir.h"
#include "../test_util.h"
#include "catalog/model_loader.h"
#include "common/error.h"
#include "exports/export.h"
#include "search_space/method_fields.h"
#include "trainer/checkpoint_files.h"
#include "trainer/run_directory.h"
#include "trainer/run_file.h"
#include "trainer/run_setup.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

TEST(RunFile, ExportedRunFileReadsBackAsTheSameConfiguration) {
  const ModelSpec& model = test::catalog().model("pythia-160m");
  ExportRequest e{&model, "a100-80gb-sxm", {1, 4}, {}, true};
  e.config = Configuration{{true, true, Sharding::kZero2, false}, 8, 32};
  const std::string path = test::write_temp_file("exported_run.toml", run_config_toml(e));
  const RunFile r = read_run_file(path);
  EXPECT_EQ(r.model, "pythia-160m");
  EXPECT_EQ(r.methods, e.config.methods);
  EXPECT_EQ(r.micro_batch_size, 8);
  EXPECT_EQ(r.grad_acc_steps, 32);
  EXPECT_EQ(r.gpus_per_node, 4);
  const RecipeSpec recipe = apply_overrides(model.recipe, r.schedule);
  EXPECT_EQ(recipe.train_steps, model.recipe.train_steps);
  EXPECT_DOUBLE_EQ(recipe.lr, model.recipe.lr);
  EXPECT_EQ(recipe.warmup_steps, model.recipe.warmup_steps);
  EXPECT_EQ(r.train.checkpoint_interval, TrainSettings{}.checkpoint_interval);
}

// A model from a file: the run file names the file, not the model (whose name the catalog lacks),
// and `train` resolves it to the same model.
TEST(RunFile, ExportOfAModelFileNamesTheFile) {
  ModelSpec model = test::catalog().model("tinyllama-1.1b");
  model.name = "my-llama";
  const std::string model_path = test::write_temp_file("my-llama.toml", model_toml(model));
  ExportRequest e{&model, "a100-80gb-sxm", {2, 8}, {}, true};
  e.config = Configuration{{true, false, Sharding::kZero1, false}, 8, 8};
  e.model_file = model_path;
  const RunFile r =
      read_run_file(test::write_temp_file("exported_file_run.toml", run_config_toml(e)));
  EXPECT_EQ(r.model, "");
  EXPECT_EQ(r.model_file, model_path);
  const ModelSpec read = run_model(test::catalog(), r, "exported_file_run.toml");
  EXPECT_EQ(read.name, "my-llama");
  EXPECT_EQ(model_toml(read), model_toml(model));
}

// Every method set the export writes reads back equal; the [methods] table holds the field
// table's keys, and a table without them reads as every method off.
TEST(RunFile, EveryMethodSetSurvivesExportAndRead) {
  const ModelSpec& model = test::catalog().model("pythia-160m");
  for (const MethodSet& m : every_method_set()) {
    ExportRequest e{&model, "a100-80gb-sxm", {2, 4}, {}, true};
    e.config = Configuration{m, 8, 16};
    const std::string text = run_config_toml(e);
    for (const MethodField& f : method_fields()) {
      EXPECT_NE(text.find(fmt::format("\n{} = ", f.name)), std::string::npos) << f.name;
    }
    EXPECT_EQ(read_run_file(test::write_temp_file("methods.toml", text)).methods, m) << describe(m);
  }
  const std::string bare =
      "model = \"pythia-14m\"\ngpu = \"cpu\"\n[methods]\n[batch]\nglobal_batch = 8\n";
  EXPECT_EQ(read_run_file(test::write_temp_file("bare.toml", bare)).methods, MethodSet{});
}

// The writer beside the reader: a run file with every table set, written and read, is itself.
TEST(RunFile, WrittenRunFileReadsBackEqual) {
  RunFile r;
  r.model = "pythia-14m";
  r.gpu = "cpu";
  r.num_nodes = 2;
  r.gpus_per_node = 4;
  r.methods = {true, false, Sharding::kZero3, true};
  r.global_batch = 64;
  r.micro_batch_size = 2;
  r.grad_acc_steps = 4;
  r.schedule = {/*steps=*/50,
                /*lr=*/1e-3,
                /*min_lr=*/1e-4,
                /*warmup_steps=*/5,
                /*clip_grad_norm=*/0.5};
  r.train = {/*seed=*/7,
             /*checkpoint_interval=*/10,
             /*keep_checkpoints=*/2,
             /*eval_interval=*/5,
             /*eval_samples=*/16,
             /*log_interval=*/3};
  r.data = {"tokens", 0.05};
  const RunFile back = read_run_file(test::write_temp_file("whole_run.toml", run_file_toml(r)));
  EXPECT_EQ(back, r);
  RunFile defaults;
  defaults.model = "pythia-14m";
  defaults.gpu = "cpu";
  defaults.global_batch = 8;
  EXPECT_EQ(read_run_file(test::write_temp_file("defaults.toml", run_file_toml(defaults))),
            defaults);
}

// The export's text, line by line as the export wrote it before its writer moved beside the
// reader.
TEST(RunFile, ExportedTextIsTheExportFormat) {
  const ModelSpec& model = test::catalog().model("pythia-160m");
  const RecipeSpec& recipe = model.recipe;
  ExportRequest e{&model, "a100-80gb-sxm", {2, 4}, {}, true};
  e.config = Configuration{{true, true, Sharding::kZero2, false}, 8, 16};
  const std::string expected =
      "# gpudays run configuration, for the trainer: gpudays train --config FILE\n"
      "model = \"pythia-160m\"\ngpu = \"a100-80gb-sxm\"\nnum_nodes = 2\ngpus_per_node = 4\n\n"
      "[methods]\nfree_lunch = true\nactivation_checkpointing = true\n"
      "sharding = \"zero_2\"\noffloading = false\n\n" +
      fmt::format("[batch]\nglobal_batch = {}\nmicro_batch_size = 8\ngrad_acc_steps = 16\n",
                  recipe.global_batch) +
      "\n# The recipe's schedule; edit to override (steps, rates, warm-up, clipping norm).\n" +
      fmt::format(
          "[schedule]\nsteps = {}\nlr = {}\nmin_lr = {}\nwarmup_steps = {}\n"
          "clip_grad_norm = {}\n\n",
          recipe.train_steps,
          recipe.lr,
          recipe.min_lr,
          recipe.warmup_steps,
          recipe.clip_grad_norm) +
      "# The run's own settings (trainer/run_file.h); intervals in optimizer steps.\n"
      "[train]\nseed = 1234\ncheckpoint_interval = 1000\nkeep_checkpoints = 3\n"
      "eval_interval = 1000\neval_samples = 64\nlog_interval = 1\n\n"
      "[data]\n# path = \"tokens.u16\"  # or gpudays train --data PREFIX\neval_fraction = 0.01\n";
  EXPECT_EQ(run_config_toml(e), expected);
}

TEST(RunFile, UnknownKeysAndBadValuesAreErrors) {
  const std::string base =
      "model = \"pythia-14m\"\ngpu = \"cpu\"\n[methods]\nsharding = \"none\"\n[batch]\n"
      "global_batch = 8\n";
  EXPECT_NO_THROW(read_run_file(test::write_temp_file("ok.toml", base)));
  for (const std::string& bad : {std::string("micro_batch_size = 4611686018427387904\n"),
                                 std::string("grad_acc_steps = 9\n"),
                                 std::string("[train]\nseeed = 1\n"),
                                 std::string("[extra]\nx = 1\n"),
                                 std::string("[schedule]\nsteps = 0\n"),
                                 std::string("[data]\neval_fraction = 1.5\n")}) {
    EXPECT_THROW(read_run_file(test::write_temp_file("bad.toml", base + bad)), InputError) << bad;
  }
  // [schedule]'s own keys are named, not the recipe's ("[recipe] train_steps") they override.
  for (const auto& [bad, said] :
       {std::pair{"steps = 100000000000000", "[schedule]: steps: must be at most 1099511627776"},
        std::pair{"min_lr = -1.0", "[schedule]: min_lr: must be >= 0, is -1"},
        std::pair{"clip_grad_norm = -2.0", "[schedule]: clip_grad_norm: must be >= 0, is -2"}}) {
    try {
      read_run_file(test::write_temp_file("schedule.toml", base + "[schedule]\n" + bad + "\n"));
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
  }
  try {  // one model, named once
    read_run_file(test::write_temp_file("two-models.toml", "model_file = \"x.toml\"\n" + base));
    ADD_FAILURE() << "model and model_file both accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model: and model_file both given"), std::string::npos)
        << e.what();
  }
}

// The file's split on the ranks it was written for; on other rank counts the micro-batch is kept
// and the accumulation recomputed, or the split is refused with the numbers.
TEST(RunFile, ConfigurationOnAnotherRankCountKeepsTheMicroBatch) {
  RunFile r;
  r.global_batch = 64;
  r.micro_batch_size = 4;
  r.grad_acc_steps = 4;
  EXPECT_EQ(configuration_on(r, 4).grad_acc_steps, 4);
  EXPECT_EQ(configuration_on(r, 2).grad_acc_steps, 8);
  EXPECT_EQ(configuration_on(r, 16).grad_acc_steps, 1);
  EXPECT_EQ(configuration_on(r, 2).micro_batch_size, 4);
  try {
    configuration_on(r, 3);
    ADD_FAILURE() << "64 does not split over 3 ranks of 4";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "the global batch 64 does not split into micro-batches of 4 on 3 ranks");
  }
  EXPECT_THROW(configuration_on(r, 32), InputError);  // 128 samples per step > 64
}

// Overrides that leave no room for the recipe's warm-up, or put min_lr above lr, blame the run
// file's [schedule], not the model file whose recipe was fine.
TEST(RunFile, ScheduleOverridesThatBreakTheRecipeNameTheRunFile) {
  RecipeSpec recipe;
  recipe.train_steps = 1000;
  recipe.warmup_steps = 5;
  recipe.lr = 1e-3;
  recipe.min_lr = 1e-4;
  ScheduleOverrides o;
  o.steps = 4;
  try {
    apply_overrides(recipe, o, "run.toml");
    ADD_FAILURE() << "4 steps with 5 of warm-up accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "run.toml [schedule]: 5 warm-up steps for a run of 4 steps (set warmup_steps "
                 "below steps)");
  }
  o.warmup_steps = 2;
  EXPECT_EQ(apply_overrides(recipe, o, "run.toml").train_steps, 4);
  o.lr = 1e-5;
  EXPECT_THROW(apply_overrides(recipe, o, "run.toml"), InputError);
}

// A shorter run keeps wsd's decay share (20% of SmolLM's 600,000 steps: 200 of 1,000), and warm-up
// that leaves no room for it is the run file's fault.
TEST(RunFile, StepsOverrideScalesTheWsdDecay) {
  const RecipeSpec recipe = test::catalog().model("smollm-135m").recipe;
  ScheduleOverrides o;
  o.steps = 1000;
  o.warmup_steps = 10;
  EXPECT_EQ(apply_overrides(recipe, o, "run.toml").decay_steps, 200);
  o.steps = 3;
  o.warmup_steps = 2;
  EXPECT_EQ(apply_overrides(recipe, o, "run.toml").decay_steps, 1);
  o.warmup_steps = 3;
  EXPECT_THROW(apply_overrides(recipe, o, "run.toml"), InputError);  // warm-up >= steps
  o.steps = 1000;
  o.warmup_steps = 900;
  try {
    apply_overrides(recipe, o, "run.toml");
    ADD_FAILURE() << "a 200-step decay after 900 of 1000 steps accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("leave no room for the recipe's 200-step decay"),
              std::string::npos)
        << e.what();
  }
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

void make_checkpoint(const std::string& dir, int64_t step) {
  begin_checkpoint(dir, step);
  write(fs::path(staging_checkpoint_dir(dir, step)) / "a.bin",
        "weights of step " + std::to_string(step));
  commit_checkpoint(dir, step, RunState{.step = step});
}

TEST(CheckpointFiles, CorruptedNewestIsSkippedForThePrevious) {
  const std::string dir = test::process_temp_dir().fresh_dir("ckpt");
  make_checkpoint(dir, 5);
  make_checkpoint(dir, 10);
  std::ostringstream messages;
  EXPECT_EQ(latest_checkpoint(dir, messages)->step, 10);
  EXPECT_EQ(messages.str(), "");
  write(fs::path(checkpoint_dir(dir, 10)) / "a.bin", "weights of step 1X");  // same size, corrupted
  EXPECT_EQ(latest_checkpoint(dir, messages)->step, 5);
  EXPECT_NE(messages.str().find("a.bin fails its checksum"), std::string::npos) << messages.str();
  fs::resize_file(fs::path(checkpoint_dir(dir, 5)) / "a.bin", 3);  // truncated
  EXPECT_FALSE(latest_checkpoint(dir, messages).has_value());
}

TEST(CheckpointFiles, UncommittedStagingIsIgnoredAndPruningKeepsTheNewest) {
  const std::string dir = test::process_temp_dir().fresh_dir("prune");
  for (int64_t step : {1, 2, 3, 4}) make_checkpoint(dir, step);
  begin_checkpoint(dir, 5);  // killed while writing step 5: no manifest, never renamed
  std::ostringstream messages;
  EXPECT_EQ(latest_checkpoint(dir, messages)->step, 4);
  fs::remove(fs::path(checkpoint_dir(dir, 4)) / "manifest.json");
  EXPECT_EQ(latest_checkpoint(dir, messages)->step, 3);
  EXPECT_NE(messages.str().find("no manifest.json"), std::string::npos);
  prune_checkpoints(dir, 2);
  EXPECT_FALSE(fs::exists(checkpoint_dir(dir, 1)));
  EXPECT_FALSE(fs::exists(checkpoint_dir(dir, 2)));
  EXPECT_TRUE(fs::exists(checkpoint_dir(dir, 3)));
  EXPECT_FALSE(fs::exists(staging_checkpoint_dir(dir, 5)));
}

// One run per directory: a second claim while the first lives is refused naming its holder; a
// directory that holds a run is continued only with --resume.
TEST(RunDirectory, OneTrainerAtATimeAndARunIsContinuedOnlyOnPurpose) {
  const fs::path out = test::process_temp_dir().fresh_dir("claimed");
  {
    const RunDirectoryClaim first(out.string(), /*resume=*/false);
    try {
      RunDirectoryClaim second(out.string(), /*resume=*/true);
      FAIL() << "a second claim was granted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("is in use by another gpudays train (pid "),
                std::string::npos)
          << e.what();
    }
  }
  std::ofstream(out / "metrics.jsonl") << "{\"step\": 1}\n";
  fs::create_directories(out / "checkpoints" / "step-1");
  EXPECT_EQ(earlier_run(out.string()), "metrics.jsonl and 1 checkpoint(s)");
  try {
    RunDirectoryClaim again(out.string(), /*resume=*/false);
    FAIL() << "a run directory was reused without --resume";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds a run (metrics.jsonl and 1 checkpoint(s)): "
                                         "continue it with --resume"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(RunDirectoryClaim(out.string(), /*resume=*/true));
}

}  // namespace
}  // namespace gpudays
