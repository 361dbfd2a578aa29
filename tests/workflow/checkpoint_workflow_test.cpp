// `gpudays train --resume` on checkpoints a careless tool or an unlucky disk left behind, as a user
// runs it: tensors missing, short, offset or mistyped (checksums recomputed, so only their contents
// can tell), a wrong random state and bad metadata end in one line naming the file and the tensor,
// exit 2, the run directory byte for byte as it was; bad manifests and junk step folders are
// skipped with a warning naming them, and the run resumes from the newest valid checkpoint with
// the uninterrupted run's losses.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "trainer/train_cli_util.h"
#include "workflow/workflow_util.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

using test::StoredSafetensors;

// A tiny run of 10 steps with checkpoints at steps 5 and 10, trained once per test process.
const test::Fixture& trained() {
  static const test::Fixture f = [] {
    test::Fixture run = test::make_run(
        "trained", "sharding = \"none\"", "checkpoint_interval = 5\nkeep_checkpoints = 3", 10);
    const ChildResult r = test::sh(test::train_command(run, "whole"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return run;
  }();
  return f;
}

// A copy of the trained run directory, named `out`.
fs::path copy_of_run(const std::string& out) {
  const fs::path dir = trained().dir / out;
  fs::copy(trained().dir / "whole", dir, fs::copy_options::recursive);
  return dir;
}

struct TamperCase {
  std::string name;
  std::string file;  // in checkpoints/step-10
  std::function<void(StoredSafetensors&)> edit;
  std::vector<std::string> message;  // parts of the one error line
};

void halve(test::StoredTensor& t) {
  t.bytes.resize(t.bytes.size() / 2);
  t.shape = {static_cast<int64_t>(t.bytes.size() / (t.dtype == "U8" ? 1 : 4))};
}

std::vector<TamperCase> tamper_cases() {
  const std::string embed = "gpt_neox.embed_in.weight";
  return {
      {"missing", "model.safetensors", [=](auto& f) { f.erase(embed); }, {embed, "missing"}},
      {"short",
       "model.safetensors",
       [=](auto& f) {
         halve(*f.find(embed));
         f.find(embed)->shape = {32, 32};
       },
       {embed, "F32 [32, 32], the model's parameter F32 [64, 32]"}},
      {"mistyped",
       "model.safetensors",
       [=](auto& f) { f.find(embed)->dtype = "I32"; },
       {embed, "is I32 [64, 32]"}},
      {"short-moment",
       "rank-0.safetensors",
       [](auto& f) { halve(*f.find("slot.0.exp_avg")); },
       {"slot.0.exp_avg lacks elements"}},
      {"missing-moment",
       "rank-0.safetensors",
       [](auto& f) { f.erase("slot.2.exp_avg_sq"); },
       {"slot.2.exp_avg_sq lacks elements [0, "}},
      {"offset",
       "rank-0.safetensors",
       [](auto& f) { f.metadata["slot.1.first"] = "3"; },
       {"rank-0.safetensors: tensor slot.1.exp_avg: 32 elements from element 3 lie outside its "
        "slot's [0, 32)"}},
      {"mistyped-moment",
       "rank-0.safetensors",
       [](auto& f) { f.find("slot.3.exp_avg")->dtype = "I32"; },
       {"rank-0.safetensors: tensor slot.3.exp_avg: is I32"}},
      {"bad-metadata",
       "rank-0.safetensors",
       [](auto& f) { f.metadata["slot.0.first"] = "99999999999999999999"; },
       {"rank-0.safetensors: tensor slot.0.exp_avg", "slot.0.first"}},
      {"short-rng",
       "rank-0.safetensors",
       [](auto& f) { halve(*f.find("rng.cpu")); },
       {"rank-0.safetensors: tensor rng.cpu: is U8", "not a random state"}},
      {"missing-rng",
       "rank-0.safetensors",
       [](auto& f) { f.erase("rng.cpu"); },
       {"rank-0.safetensors: tensor rng.cpu: missing"}},
      {"unknown-tensor",
       "rank-0.safetensors",
       [](auto& f) {
         f.tensors.push_back({"slot.99.exp_avg", {"F32", {1}, std::string(4, '\0')}});
       },
       {"rank-0.safetensors: tensor slot.99.exp_avg: not a tensor of this checkpoint's"}},
  };
}

// Each tampered newest checkpoint: one line naming the file and the tensor, exit 2, nothing
// written, and never a zero-filled tensor (the run does not start).
TEST(Workflow, TamperedCheckpointTensorsAreRefusedNamingFileAndTensor) {
  for (const TamperCase& c : tamper_cases()) {
    const fs::path out = copy_of_run("tamper-" + c.name);
    test::tamper(out / "checkpoints/step-10", c.file, c.edit);
    const auto before = test::snapshot(out);
    const ChildResult r = test::sh(test::train_command(trained(), "tamper-" + c.name, "--resume"));
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    std::vector<std::string> parts = c.message;
    parts.push_back((out / "checkpoints/step-10").string());
    test::expect_one_error_line(r.err, parts);
    EXPECT_EQ(r.err.find("resumed from"), std::string::npos) << c.name << ": " << r.err;
    EXPECT_TRUE(test::snapshot(out) == before) << c.name << ": the run directory changed";
  }
}

// The newest checkpoint's weights truncated (its checksum fails): skipped, named, and the run
// resumes from step 5 with the uninterrupted run's losses.
TEST(Workflow, ATruncatedNewestCheckpointFallsBackToThePreviousOne) {
  const fs::path out = copy_of_run("cut");
  fs::resize_file(out / "checkpoints/step-10/model.safetensors", 100);
  const ChildResult r = test::sh(test::train_command(trained(), "cut", "--resume"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::expect_no_internal_error(r.err);
  EXPECT_NE(r.err.find("step-10: model.safetensors fails its checksum"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("resumed from " + (out / "checkpoints/step-5").string()), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("resumed at step 5 and trained to step 10 (5 steps); last loss "),
            std::string::npos)
      << r.out;
  test::expect_same_losses(
      test::metrics(trained(), "whole"), test::metrics(trained(), "cut"), /*tolerance=*/0.0);
  // Resumed once more, the finished run has nothing to train: said so, with no loss.
  const ChildResult again = test::sh(test::train_command(trained(), "cut", "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.rfind("nothing to train: the run is at step 10 of 10; checkpoints in ", 0),
            0u)
      << again.out;
}

// Every checkpoint truncated: --resume is refused (exit 2, one error line), each named as
// skipped, and the run directory is left as it was: no run from step 0 beside its metrics.
TEST(Workflow, ResumeRefusesWhenNoCheckpointPassesItsCheck) {
  const fs::path out = copy_of_run("all-cut");
  for (const char* step : {"step-5", "step-10"}) {
    fs::resize_file(out / "checkpoints" / step / "model.safetensors", 100);
  }
  const auto before = test::snapshot(out);
  const ChildResult r = test::sh(test::train_command(trained(), "all-cut", "--resume"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  test::expect_one_error_line(r.err, {"--resume: no checkpoint in", "passes its check"});
  EXPECT_NE(r.err.find("step-5: model.safetensors fails its checksum"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("starting"), std::string::npos) << r.err;
  EXPECT_TRUE(test::snapshot(out) == before) << "the run directory changed";
}

// A manifest whose step, state or file list is bad is skipped for the checkpoint before it, with a
// warning naming it; the run then continues with the uninterrupted run's losses.
TEST(Workflow, BadManifestsAreSkippedForTheCheckpointBefore) {
  using Edit = std::function<void(nlohmann::json&)>;
  const std::vector<std::pair<std::string, Edit>> cases = {
      {"manifest.json: step -3 is negative", [](auto& m) { m["step"] = -3; }},
      {"manifest.json is of step 9, not 10", [](auto& m) { m["step"] = 9; }},
      {"state.world_size is \"two\"", [](auto& m) { m["state"]["world_size"] = "two"; }},
      {"state has no slot_numels", [](auto& m) { m["state"].erase("slot_numels"); }},
      {"state.loss_scale is null", [](auto& m) { m["state"]["loss_scale"] = nullptr; }},
      {"state.step 12 is not its step 10", [](auto& m) { m["state"]["step"] = 12; }},
      {"has no files object", [](auto& m) { m["files"] = nlohmann::json::array(); }},
      {"names the file '../run.toml'", [](auto& m) { m["files"]["../run.toml"] = "0"; }},
      {"manifest.json: not a JSON object", [](auto& m) { m = "not a manifest"; }},
      {"malformed manifest.json", {}},  // not JSON at all
  };
  int n = 0;
  for (const auto& [warning, edit] : cases) {
    const std::string name = "manifest-" + std::to_string(n++);
    const fs::path out = copy_of_run(name);
    if (edit) {
      test::edit_manifest(out / "checkpoints/step-10", edit);
    } else {
      test::write_text(out / "checkpoints/step-10/manifest.json", "{\"step\": 10, ");
    }
    const ChildResult r = test::sh(test::train_command(trained(), name, "--resume"));
    EXPECT_EQ(r.exit_code, 0) << warning << ": " << r.err;
    test::expect_no_internal_error(r.err);
    EXPECT_NE(r.err.find("gpudays: checkpoint skipped: " + (out / "checkpoints/step-10").string()),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("resumed from " + (out / "checkpoints/step-5").string()),
              std::string::npos)
        << r.err;
    test::expect_same_losses(
        test::metrics(trained(), "whole"), test::metrics(trained(), name), /*tolerance=*/0.0);
  }
}

// Folders named like checkpoints that are not (a step past 2^63, a word, a sign, a leading zero)
// and a file named like one are each named in a warning; --resume uses the newest valid one.
TEST(Workflow, JunkStepFoldersAreNamedAndNeverFatal) {
  const fs::path out = copy_of_run("junk");
  const std::vector<std::string> junk = {
      "step-99999999999999999999", "step-abc", "step--3", "step-007", "step-"};
  for (const std::string& name : junk) fs::create_directories(out / "checkpoints" / name);
  test::write_text(out / "checkpoints/step-12", "a file");
  const ChildResult r = test::sh(test::train_command(trained(), "junk", "--resume"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::expect_no_internal_error(r.err);
  for (const std::string& name : junk) {
    EXPECT_NE(r.err.find("gpudays: warning: " + (out / "checkpoints" / name).string() +
                         ": not a checkpoint"),
              std::string::npos)
        << name << ": " << r.err;
  }
  EXPECT_NE(r.err.find((out / "checkpoints/step-12").string() + ": not a checkpoint"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("resumed from " + (out / "checkpoints/step-10").string()), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace gpudays
