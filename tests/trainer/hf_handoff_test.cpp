// The HuggingFace hand-off: a checkpoint of a tiny GPT-NeoX with every tensor randomised (norms and
// biases included, so a swapped or transposed tensor cannot pass) exported by `gpudays export-hf`,
// sharded, loads in transformers with no missing or unexpected keys and gives gpudays' logits; the
// tokenizer files come along; the sharded directory reads back bit for bit (--init-from). A model
// trained in bf16 exports in bf16 and gives its logits in transformers too. The llama family's
// three transformers classes export the same way, and checkpoints transformers saved of them
// start a run (--init-from) with transformers' logits.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "../models/torch_test_util.h"
#include "common/child_process.h"
#include "models/safetensors.h"
#include "models/zoo.h"
#include "trainer/checkpoint_files.h"
#include "trainer/hf_handoff.h"
#include "trainer/train_state.h"
#include "trainer/trainer.h"

namespace gpudays {
namespace {
namespace fs = std::filesystem;

// A checkpoint of `spec` with random weights (as the trainer writes one), and its model.
models::ZooModel write_random_checkpoint(const ModelSpec& spec, const fs::path& checkpoints) {
  models::ZooOptions zoo;
  zoo.param_options = at::TensorOptions().dtype(at::kFloat);
  models::ZooModel model = models::make_model(spec, zoo);
  at::manual_seed(3);
  models::NamedTensors named;
  {
    at::NoGradGuard no_grad;
    for (const auto& item : model.module().named_parameters()) {
      item.value().copy_(at::randn_like(item.value()) * 0.5);
      named.emplace_back(item.key(), item.value());
    }
  }
  begin_checkpoint(checkpoints.string(), 1);
  const fs::path staging = staging_checkpoint_dir(checkpoints.string(), 1);
  models::write_safetensors((staging / "model.safetensors").string(), named);
  fs::copy_file(test::source_dir() + "/tests/models/data/" + spec.name + ".toml",
                staging / "tiny.toml");
  std::ofstream(staging / "tokenizer.json") << "{\"version\": \"1.0\"}\n";
  commit_checkpoint(
      checkpoints.string(),
      1,
      RunState{.step = 1, .extra = {{"model", spec.name}, {"model_file", "tiny.toml"}}});
  return model;
}

TEST(HfHandoff, ShardedExportLoadsInTransformersWithTheSameLogits) {
  const ModelSpec spec = test::tiny_spec("tiny-gpt-neox");
  const fs::path dir = test::scratch_dir("hf-handoff");
  models::ZooModel model = write_random_checkpoint(spec, dir / "checkpoints");
  const fs::path out = dir / "hf";
  const ChildResult r = run_child({GPUDAYS_BINARY,
                                   "export-hf",
                                   "--checkpoint",
                                   (dir / "checkpoints/step-1").string(),
                                   "--out",
                                   out.string(),
                                   "--max-shard-size",
                                   "20000"},
                                  ChildOptions{300.0, ""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(out / "model.safetensors"));
  EXPECT_TRUE(fs::exists(out / "tokenizer.json"));
  EXPECT_NE(r.out.find("weight files"), std::string::npos) << r.out;

  const at::Tensor ids =
      at::arange(0, 2 * 12, at::kLong).remainder(spec.arch.vocab_size).view({2, 12});
  at::Tensor logits;
  {
    at::NoGradGuard no_grad;
    models::Batch b;
    b.input_ids = ids;
    logits = model.logits(b);
  }
  const std::string expected = (dir / "expected.safetensors").string();
  models::write_safetensors(expected, {{"input_ids", ids}, {"logits", logits}});
  const std::string command =
      fmt::format("TMPDIR='{}' '{}' '{}/tests/trainer/check_hf_handoff.py' '{}' '{}' 1e-4",
                  test::scratch_dir("python-tmp"),
                  test::ref_python(),
                  test::source_dir(),
                  out.string(),
                  expected);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;

  // --init-from reads the sharded directory back exactly.
  std::vector<std::string> names;
  std::vector<at::Tensor> params;
  for (const auto& item : model.module().named_parameters()) {
    names.push_back(item.key());
    params.push_back(item.value());
  }
  const std::vector<at::Tensor> back = read_pretrained_parameters(out.string(), names, spec.family);
  for (size_t i = 0; i < names.size(); ++i) EXPECT_TRUE(at::equal(back[i], params[i])) << names[i];
}

// The logits of `model` on a fixed batch of 2 x 12 tokens, written beside the export for
// check_hf_handoff.py; returns the file.
std::string write_expected_logits(models::ZooModel& model,
                                  const ModelSpec& spec,
                                  const fs::path& dir) {
  const at::Tensor ids =
      at::arange(0, 2 * 12, at::kLong).remainder(spec.arch.vocab_size).view({2, 12});
  at::NoGradGuard no_grad;
  models::Batch b;
  b.input_ids = ids;
  const std::string expected = (dir / "expected.safetensors").string();
  models::write_safetensors(expected, {{"input_ids", ids}, {"logits", model.logits(b)}});
  return expected;
}

// --out is new or empty, or replaced whole with --force: an earlier export's files never mix
// with a later one's; a file, or a directory holding the checkpoint, is refused.
TEST(HfHandoff, ExportNeverMixesWithAnEarlierExport) {
  const ModelSpec spec = test::tiny_spec("tiny-gpt-neox");
  const fs::path dir = test::scratch_dir("hf-handoff-again");
  write_random_checkpoint(spec, dir / "checkpoints");
  const std::string checkpoint = (dir / "checkpoints/step-1").string();
  const fs::path out = dir / "hf";
  const auto export_hf = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        GPUDAYS_BINARY, "export-hf", "--checkpoint", checkpoint, "--out", out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_child(argv, ChildOptions{300.0, ""});
  };
  ASSERT_EQ(export_hf({"--max-shard-size", "20000"}).exit_code, 0);
  ASSERT_TRUE(fs::exists(out / "model.safetensors.index.json"));
  const ChildResult again = export_hf({});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_NE(again.err.find("is not empty; choose a new directory or pass --force"),
            std::string::npos)
      << again.err;
  EXPECT_FALSE(fs::exists(out / "model.safetensors")) << "the refused export wrote into --out";
  const ChildResult forced = export_hf({"--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(fs::exists(out / "model.safetensors"));
  EXPECT_FALSE(fs::exists(out / "model.safetensors.index.json")) << "a stale index was kept";
  for (const auto& entry : fs::directory_iterator(out)) {
    EXPECT_NE(entry.path().filename().string().rfind("model-", 0), 0u)
        << "a stale shard was kept: " << entry.path();
  }
  std::ofstream(dir / "a-file") << "x";
  const ChildResult file = run_child(
      {GPUDAYS_BINARY, "export-hf", "--checkpoint", checkpoint, "--out", (dir / "a-file").string()},
      ChildOptions{300.0, ""});
  EXPECT_EQ(file.exit_code, 2) << file.err;
  EXPECT_NE(file.err.find("exists and is not a directory"), std::string::npos) << file.err;
  const ChildResult over = run_child(
      {GPUDAYS_BINARY, "export-hf", "--checkpoint", checkpoint, "--out", dir.string(), "--force"},
      ChildOptions{300.0, ""});
  EXPECT_EQ(over.exit_code, 2) << over.err;
  EXPECT_NE(over.err.find("holds the checkpoint"), std::string::npos) << over.err;
  EXPECT_TRUE(fs::exists(checkpoint));
  // --force replaces an earlier export only, never a folder of other files.
  std::ofstream(out / "notes.txt") << "mine";
  const ChildResult others = export_hf({"--force"});
  EXPECT_EQ(others.exit_code, 2) << others.err;
  EXPECT_NE(others.err.find("holds notes.txt, which an export does not write"), std::string::npos)
      << others.err;
  EXPECT_TRUE(fs::exists(out / "notes.txt"));
  EXPECT_TRUE(fs::exists(out / "model.safetensors"));
  // An existing empty folder reached through a link (a mounted volume, ".") keeps its place: the
  // export lands in the folder, the link stays a link.
  fs::create_directories(dir / "volume");
  fs::create_symlink(dir / "volume", dir / "link");
  const ChildResult linked = run_child(
      {GPUDAYS_BINARY, "export-hf", "--checkpoint", checkpoint, "--out", (dir / "link").string()},
      ChildOptions{300.0, ""});
  ASSERT_EQ(linked.exit_code, 0) << linked.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_TRUE(fs::exists(dir / "volume/model.safetensors"));
  EXPECT_TRUE(fs::exists(dir / "volume/config.json"));
  for (const auto& entry : fs::directory_iterator(dir / "volume")) {
    EXPECT_EQ(entry.path().filename().string().rfind(".export-hf", 0), std::string::npos)
        << "staging left behind: " << entry.path();
  }
}

// Llama (grouped-query, untied), Qwen2 (q/k/v biases, tied) and OLMo (no norm weights, tied):
// `gpudays export-hf` writes what transformers' from_pretrained loads with no missing or
// unexpected tensor, in the class config.json names, and the logits are gpudays'.
TEST(HfHandoff, LlamaFamilyExportsLoadInTransformersWithTheSameLogits) {
  for (const char* name : {"tiny-llama", "tiny-qwen2", "tiny-olmo"}) {
    const ModelSpec spec = test::tiny_spec(name);
    const fs::path dir = test::scratch_dir(std::string("hf-handoff-") + name);
    models::ZooModel model = write_random_checkpoint(spec, dir / "checkpoints");
    const fs::path out = dir / "hf";
    const ChildResult r = run_child({GPUDAYS_BINARY,
                                     "export-hf",
                                     "--checkpoint",
                                     (dir / "checkpoints/step-1").string(),
                                     "--out",
                                     out.string()},
                                    ChildOptions{300.0, ""});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_TRUE(fs::exists(out / "model.safetensors")) << name;
    const std::string command =
        fmt::format("TMPDIR='{}' '{}' '{}/tests/trainer/check_hf_handoff.py' '{}' '{}' 1e-4",
                    test::scratch_dir("python-tmp"),
                    test::ref_python(),
                    test::source_dir(),
                    out.string(),
                    write_expected_logits(model, spec, dir));
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
}

// --init-from a directory transformers' save_pretrained wrote (the parity fixtures: a randomised
// LlamaForCausalLM, and the tied Qwen2ForCausalLM without an lm_head tensor): every parameter
// reads back as stored, and the model gives transformers' logits on the fixture's batch.
TEST(HfHandoff, InitFromATransformersSavedLlamaFamilyCheckpoint) {
  for (const char* name : {"tiny-llama", "tiny-qwen2"}) {
    const ModelSpec spec = test::tiny_spec(name);
    models::ZooModel model = models::make_model(spec, {});
    model.module().eval();
    std::vector<std::string> names;
    std::vector<at::Tensor> params;
    for (const auto& item : model.module().named_parameters()) {
      names.push_back(item.key());
      params.push_back(item.value());
    }
    const fs::path dir = fs::path(test::fixture_path(name, "model.safetensors")).parent_path();
    const std::vector<at::Tensor> init =
        read_pretrained_parameters(dir.string(), names, spec.family);
    const models::SafetensorsReader stored((dir / "model.safetensors").string());
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_TRUE(at::equal(init[i], stored.read(names[i]))) << name << " " << names[i];
      params[i].copy_(init[i]);
    }
    const models::SafetensorsReader expected(test::fixture_path(name, "expected.safetensors"));
    models::Batch b;
    b.input_ids = expected.read("input_ids");
    EXPECT_LT(test::max_abs_diff(model.logits(b), expected.read("logits")), 1e-5) << name;
  }
}

class CyclicTokens final : public data::TokenSamples {
 public:
  explicit CyclicTokens(int64_t tokens) : tokens_(tokens) {}
  int64_t num_samples() const override { return 64; }
  int64_t sample_tokens() const override { return tokens_; }
  int64_t vocab_limit() const override { return 96; }
  void read_sample(int64_t index, int64_t* out) const override {
    for (int64_t i = 0; i < tokens_; ++i) out[i] = (index * 7 + i * 3) % 96;
  }

 private:
  int64_t tokens_;
};

// Runs check_hf_handoff.py on `out` against `logits` of `ids`.
int check_in_transformers(const fs::path& out,
                          const fs::path& dir,
                          const std::string& name,
                          const at::Tensor& ids,
                          const at::Tensor& logits,
                          double tolerance,
                          const std::string& mode) {
  const std::string expected = (dir / (name + ".safetensors")).string();
  models::write_safetensors(expected, {{"input_ids", ids}, {"logits", logits.to(at::kFloat)}});
  const std::string command =
      fmt::format("TMPDIR='{}' '{}' '{}/tests/trainer/check_hf_handoff.py' '{}' '{}' {} {}",
                  test::scratch_dir("python-tmp"),
                  test::ref_python(),
                  test::source_dir(),
                  out.string(),
                  expected,
                  tolerance,
                  mode);
  return std::system(command.c_str());
}

// A tiny GPT-NeoX trained 5 steps in bf16 (autocast over fp32 masters, the recipe's precision),
// exported: config.json says bfloat16, the weights are the masters rounded to bf16, and
// transformers gives (1) in fp32 the logits gpudays computes in fp32 from the rounded weights
// within 1e-4 (the hand-off itself loses nothing more), and (2) run in bf16, the logits gpudays
// computes under bf16 autocast from the fp32 masters within 0.03, 2% of the largest logit (1.39)
// and 4x the difference measured (0.0078): bf16 keeps 8 significant bits (relative step 2^-8 =
// 0.4%), and the two frameworks round at different points (HF's weights and every activation in
// bf16; autocast the matmul inputs alone).
TEST(HfHandoff, Bf16TrainedModelGivesItsLogitsInTransformers) {
  at::set_num_threads(1);
  const fs::path dir = test::scratch_dir("hf-handoff-bf16");
  fs::remove_all(dir);
  TrainerOptions o;
  o.model = test::tiny_spec("tiny-gpt-neox");
  o.model.recipe.precision = Precision::kBf16;
  o.model.recipe.train_steps = 5;
  o.model.recipe.lr = 3e-3;
  o.config.micro_batch_size = 8;
  o.settings.eval_interval = 0;
  o.out_dir = (dir / "run").string();
  // The recipe's precision lives in the model file, which the checkpoint carries to the export.
  std::ifstream in(test::source_dir() + "/tests/models/data/tiny-gpt-neox.toml");
  std::string toml((std::istreambuf_iterator<char>(in)), {});
  const size_t at = toml.find("precision = \"fp32\"");
  ASSERT_NE(at, std::string::npos);
  toml.replace(at, std::string("precision = \"fp32\"").size(), "precision = \"bf16\"");
  fs::create_directories(dir);
  o.model_file = (dir / "tiny-bf16.toml").string();
  std::ofstream(o.model_file) << toml;
  const auto comm = make_single_process_communicator();
  train(o, CyclicTokens(o.model.arch.seq_len), *comm);
  const fs::path checkpoint = dir / "run/checkpoints/step-5";
  const fs::path out = dir / "hf";
  const ChildResult r = run_child(
      {GPUDAYS_BINARY, "export-hf", "--checkpoint", checkpoint.string(), "--out", out.string()},
      ChildOptions{300.0, ""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream config(out / "config.json");
  const std::string config_text((std::istreambuf_iterator<char>(config)), {});
  EXPECT_NE(config_text.find("\"bfloat16\""), std::string::npos) << config_text;

  models::ZooOptions zoo;
  zoo.param_options = at::TensorOptions().dtype(at::kFloat);
  models::ZooModel model = models::make_model(o.model, zoo);
  model.module().eval();
  std::vector<std::string> names;
  std::vector<at::Tensor> params;
  for (const auto& item : model.module().named_parameters()) {
    names.push_back(item.key());
    params.push_back(item.value());
  }
  const std::vector<at::Tensor> masters = read_checkpoint_parameters(checkpoint.string(), names);
  const at::Tensor ids =
      at::arange(0, 2 * 12, at::kLong).remainder(o.model.arch.vocab_size).view({2, 12});
  models::Batch b;
  b.input_ids = ids;
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(masters[i]);
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const at::Tensor autocast_logits = model.logits(b).to(at::kFloat);
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(masters[i].to(at::kBFloat16));
  const at::Tensor rounded_logits = model.logits(b);
  EXPECT_EQ(check_in_transformers(out, dir, "fp32", ids, rounded_logits, 1e-4, "fp32"), 0);
  EXPECT_EQ(check_in_transformers(out, dir, "bf16", ids, autocast_logits, 0.03, "native"), 0);
}

}  // namespace
}  // namespace gpudays
