// Catalog tests: every file loads, parameter counts equal HuggingFace's, look-ups and bad files
// fail with messages that name the problem.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "catalog/catalog.h"
#include "catalog/gpu_loader.h"
#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "process_dir.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

// num_parameters() of the HuggingFace classes (GPTNeoXForCausalLM, RobertaForMaskedLM,
// ViTForImageClassification, ConvNextForImageClassification, MambaForCausalLM, LlamaForCausalLM)
// built on the meta device from the catalog's configurations with transformers 5.24.0 / torch
// 2.11.0.
TEST(ParamCount, EqualsHuggingFaceForEveryReferenceModel) {
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"pythia-14m", 14067712},
      {"pythia-31m", 30494720},
      {"pythia-70m", 70426624},
      {"pythia-160m", 162322944},
      {"pythia-410m", 405334016},
      {"pythia-1b", 1011781632},
      {"pythia-1.4b", 1414647808},
      {"pythia-2.8b", 2775208960},
      {"pythia-6.9b", 6857302016},
      {"pythia-12b", 11846072320},
      {"roberta", 355412057},
      {"vit", 325688657},
      {"convnext-large-1k", 197767336},
      {"convnext-large-22k", 229799953},
      {"convnext-xlarge-22k", 392900177},
      {"mamba", 2768345600},
      {"tinyllama-1.1b", 1100048384},
      {"olmo-1b", 1176764416},     // OlmoForCausalLM
      {"smollm-135m", 134515008},  // tied embeddings
  };
  ASSERT_EQ(catalog().models().size(), expected.size());
  for (const auto& [name, count] : expected) {
    EXPECT_EQ(count_params(catalog().model(name)).total, count) << name;
  }
}

TEST(ParamCount, EmbeddingSplitForGptNeox) {
  const ParamCounts p = count_params(catalog().model("pythia-1b"));
  EXPECT_EQ(p.embedding, 50304 * 2048);
  EXPECT_EQ(p.unembedding, 50304 * 2048);
  EXPECT_EQ(p.non_embedding(), 1011781632 - 50304 * 2048);
}

// The largest parameter tensor and the input-only embedding tables, from the shapes the
// HuggingFace classes give their weights.
TEST(ParamCount, LargestTensorAndInputOnlyEmbeddings) {
  struct Expected {
    const char* model;
    int64_t largest;
    int64_t input_only;
  };
  for (const Expected& e : {
           // gpt_neox.embed_in [50304, 2048], untied from embed_out
           Expected{"pythia-1b", 50304 * 2048, 50304 * 2048},
           // embeddings.word_embeddings [50265, 1024], tied to lm_head.decoder; position [514,
           // 1024] and token_type [1, 1024] are the input's own
           Expected{"roberta", 50265 * 1024, (514 + 1) * 1024},
           // classifier [21841, 1024]; cls_token [1, 1, 1024] and position [1, 197, 1024]
           Expected{"vit", 21841 * 1024, 1024 + 197 * 1024},
           // the last stage's pwconv1 [6144, 1536] (classifier [1000, 1536], downsampling [1536,
           // 768, 2, 2])
           Expected{"convnext-large-1k", 4 * 1536 * 1536, 0},
           // backbone.embeddings [50280, 2560], tied to lm_head
           Expected{"mamba", 50280 * 2560, 0},
           // model.embed_tokens [32000, 2048], untied from lm_head
           Expected{"tinyllama-1.1b", 32000 * 2048, 32000 * 2048},
           // model.embed_tokens [49152, 576], tied to lm_head
           Expected{"smollm-135m", 49152 * 576, 0},
       }) {
    const ParamCounts p = count_params(catalog().model(e.model));
    EXPECT_EQ(p.largest_tensor, e.largest) << e.model;
    EXPECT_EQ(p.input_only_embedding, e.input_only) << e.model;
  }
}

TEST(Catalog, HasEveryRequiredGpu) {
  for (const char* name : {"rtx-3090",
                           "rtx-4090",
                           "rtx-a6000",
                           "a40",
                           "l40",
                           "l40s",
                           "v100-16gb",
                           "v100-32gb",
                           "a100-40gb-pcie",
                           "a100-40gb-sxm",
                           "a100-80gb-pcie",
                           "a100-80gb-sxm",
                           "h100-pcie",
                           "h100-sxm",
                           "h200",
                           "b200"}) {
    const GpuSpec& g = catalog().gpu(name);
    EXPECT_GT(g.peak_fp16_tflops, 0) << name;
    EXPECT_GT(g.memory_bytes, 0) << name;
    EXPECT_FALSE(g.sources.at("peak_tflops").empty()) << name;
    EXPECT_FALSE(g.sources.at("price").empty()) << name;
  }
}

TEST(Catalog, NamesMatchInAnyCaseAndModelsByHuggingFaceId) {
  EXPECT_EQ(catalog().model("Pythia-1B").name, "pythia-1b");
  EXPECT_EQ(catalog().model("EleutherAI/pythia-1b").name, "pythia-1b");
  EXPECT_EQ(catalog().model("ROBERTA-LARGE").name, "roberta");
  EXPECT_EQ(catalog().model("state-spaces/mamba-2.8b-hf").name, "mamba");
  EXPECT_EQ(catalog().gpu("H100").name, "h100-sxm");
  EXPECT_EQ(catalog().gpu("GeForce3090").name, "rtx-3090");
  EXPECT_EQ(catalog().find_model("pythia-7b"), nullptr);
  EXPECT_EQ(catalog().find_gpu("a200"), nullptr);
  std::vector<std::string> names = catalog().gpu_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

TEST(Catalog, ReferenceNamesAreAliases) {
  EXPECT_EQ(catalog().gpu("geforce3090").name, "rtx-3090");
  EXPECT_EQ(catalog().gpu("a100").name, "a100-80gb-sxm");
  EXPECT_EQ(catalog().gpu("h100").name, "h100-sxm");
  EXPECT_EQ(catalog().gpu("a6000").name, "rtx-a6000");
  EXPECT_EQ(catalog().gpu("v100").name, "v100-32gb");
  EXPECT_EQ(catalog().gpu("l40").name, "l40");
  EXPECT_EQ(catalog().gpu("a40").name, "a40");
}

TEST(Catalog, ReferencePricesFromThePaper) {
  EXPECT_EQ(catalog().gpu("rtx-3090").purchase_usd, 1300);
  EXPECT_EQ(catalog().gpu("rtx-a6000").purchase_usd, 4800);
  EXPECT_EQ(catalog().gpu("a100").purchase_usd, 19000);
  EXPECT_EQ(catalog().gpu("h100").purchase_usd, 30000);
}

TEST(Catalog, UnknownNamesListTheValidChoices) {
  try {
    catalog().model("pythia-7b");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pythia-6.9b"), std::string::npos) << e.what();
  }
  try {
    catalog().gpu("a200");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a100-80gb-sxm"), std::string::npos) << e.what();
  }
}

namespace fs = std::filesystem;

// A catalog of the shipped models and GPUs in a fresh directory, to break.
fs::path copied_catalog(const std::string& name) {
  const fs::path dir = test::process_temp_dir().fresh_dir(name);
  for (const char* sub : {"models", "gpus"}) {
    fs::copy(fs::path(catalog().config_dir()) / sub, dir / sub, fs::copy_options::recursive);
  }
  return dir;
}

std::string load_error(const fs::path& dir) {
  try {
    Catalog::load({dir.string()});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A *.toml entry that is not a readable file is an error naming it (a looping link was an
// "internal error: filesystem error"; a dangling link or a directory so named was skipped).
TEST(Catalog, EntriesThatAreNoFileAreErrorsNamingThem) {
  const fs::path loop = copied_catalog("loop-catalog");
  fs::create_symlink("loop.toml", loop / "gpus" / "loop.toml");
  EXPECT_NE(load_error(loop).find((loop / "gpus" / "loop.toml").string() +
                                  ": cannot read the file: Too many levels of symbolic links"),
            std::string::npos)
      << load_error(loop);
  const fs::path dangling = copied_catalog("dangling-catalog");
  fs::create_symlink("gone.toml", dangling / "gpus" / "x.toml");
  EXPECT_NE(load_error(dangling).find("x.toml: a link to gone.toml, which does not exist"),
            std::string::npos)
      << load_error(dangling);
  const fs::path folder = copied_catalog("folder-catalog");
  fs::create_directory(folder / "gpus" / "zz.toml");
  EXPECT_NE(load_error(folder).find("zz.toml: not a file"), std::string::npos)
      << load_error(folder);
  if (geteuid() != 0) {  // root lists a directory of mode 000
    const fs::path unreadable = copied_catalog("unreadable-catalog");
    fs::permissions(unreadable / "models", fs::perms::none);
    EXPECT_NE(load_error(unreadable).find("models: cannot list the directory: Permission denied"),
              std::string::npos)
        << load_error(unreadable);
    fs::permissions(unreadable / "models", fs::perms::owner_all);
  }
  const test::CommandResult r =
      test::run_gpudays("--config-dir " + loop.string() + " plan --model pythia-1b --gpu a100");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

// An editor's lock file beside a model it edits (Emacs: `.#name.toml`, a dangling link) is a
// hidden name: not read, so every command keeps working while the file is open.
TEST(Catalog, HiddenEntriesAreNotRead) {
  const fs::path edited = copied_catalog("lock-file-catalog");
  fs::create_symlink("user@host.1:2", edited / "models" / ".#pythia-1b.toml");
  const test::CommandResult r = test::run_gpudays("--config-dir " + edited.string() + " models");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pythia-1b"), std::string::npos) << r.out;
}

// An empty gpus/ says there is no GPU file there, not "valid: " and an empty list.
TEST(Catalog, NoGpuFilesIsSaid) {
  const fs::path dir = test::process_temp_dir().fresh_dir("no-gpus-catalog");
  fs::create_directory(dir / "models");
  fs::create_directory(dir / "gpus");
  fs::copy(catalog().model("pythia-70m").source_path, dir / "models");  // no reported GPU
  try {
    Catalog::load({dir.string()}).gpu("a100");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown GPU 'a100': there are no GPU files in " +
                                         (dir / "gpus").string()),
              std::string::npos)
        << e.what();
  }
}

// [reported] gpu is a catalog GPU's name (docs/catalog.md), checked as a published case's is.
TEST(Catalog, AReportedRunNamesACatalogGpu) {
  const fs::path dir = copied_catalog("reported-catalog");
  const fs::path file = dir / "models" / "pythia-160m.toml";
  std::string text = test::read_file(file.string());
  const std::string from = "gpu = \"a100-40gb-sxm\"";
  ASSERT_NE(text.find(from), std::string::npos);
  std::ofstream(file) << std::string(text).replace(
      text.find(from), from.size(), "gpu = \"nonexistent\"");
  EXPECT_NE(load_error(dir).find(file.string() + " [reported]: gpu: unknown GPU 'nonexistent'"),
            std::string::npos)
      << load_error(dir);
  std::ofstream(file) << std::string(text).replace(text.find(from), from.size(), "gpu = \"a100\"");
  EXPECT_NE(load_error(dir).find("'a100' is an alias; use the catalog name 'a100-80gb-sxm'"),
            std::string::npos)
      << load_error(dir);
}

TEST(Catalog, ViTSequenceIsPatchesPlusClassToken) {
  EXPECT_EQ(catalog().model("vit").arch.seq_len, 14 * 14 + 1);
}

}  // namespace
}  // namespace gpudays
