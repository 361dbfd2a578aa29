// The HuggingFace hand-off: a checkpoint of a tiny GPT-NeoX with every tensor randomised (norms and
// biases included, so a swapped or transposed tensor cannot pass) exported by `gpudays export-hf`,
// sharded, loads in transformers with no missing or unexpected keys and gives gpudays' logits; the
// tokenizer files come along; the sharded directory reads back bit for bit (--init-from).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "../models/torch_test_util.h"
#include "bench/child_process.h"
#include "models/safetensors.h"
#include "models/zoo.h"
#include "trainer/checkpoint_files.h"
#include "trainer/hf_handoff.h"

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
  fs::copy_file(test::source_dir() + "/tests/models/data/tiny-gpt-neox.toml",
                staging / "tiny.toml");
  std::ofstream(staging / "tokenizer.json") << "{\"version\": \"1.0\"}\n";
  commit_checkpoint(
      checkpoints.string(), 1, {{"extra", {{"model", spec.name}, {"model_file", "tiny.toml"}}}});
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

}  // namespace
}  // namespace gpudays
