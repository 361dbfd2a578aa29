// Bad model and GPU files: each gets an InputError naming the file, table and field.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalog/gpu_loader.h"
#include "catalog/gpu_peak.h"
#include "catalog/model_loader.h"
#include "catalog/toml_fields.h"
#include "common/error.h"
#include "test_util.h"

namespace gpudays {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string pythia_70m() {
  return read_file(test::catalog().model("pythia-70m").source_path);
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

std::string load_error(const std::string& contents) {
  const std::string path = test::write_temp_file("model.toml", contents);
  try {
    load_model_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& contents, const std::string& needle) {
  const std::string error = load_error(contents);
  EXPECT_NE(error.find(needle), std::string::npos) << "error was: '" << error << "'";
}

TEST(ModelFile, UserFileLoadsAnywhere) {
  const std::string path =
      test::write_temp_file("mine.toml", replace(pythia_70m(), "pythia-70m\"", "mine\""));
  EXPECT_EQ(load_model_file(path).name, "mine");
}

TEST(ModelFile, HeadsNotDividingWidth) {
  expect_error(replace(pythia_70m(), "n_heads = 8", "n_heads = 7"), "[arch]: n_heads");
}

TEST(ModelFile, UnknownFamilyNamesTheChoices) {
  expect_error(replace(pythia_70m(), "family = \"gpt_neox\"", "family = \"gemma\""),
               "unknown family 'gemma'; valid: gpt_neox, roberta, vit, convnext, mamba or llama");
}

TEST(ModelFile, MissingKey) {
  expect_error(replace(pythia_70m(), "d_model = 512\n", ""), "[arch]: d_model: missing");
}

TEST(ModelFile, UnknownKeyIsATypo) {
  expect_error(replace(pythia_70m(), "d_model = 512", "d_model = 512\nd_modle = 4"),
               "d_modle: unknown key");
}

TEST(ModelFile, WrongType) {
  expect_error(replace(pythia_70m(), "seq_len = 2048", "seq_len = \"long\""),
               "seq_len: must be an integer");
}

TEST(ModelFile, BadPrecision) {
  expect_error(replace(pythia_70m(), "precision = \"fp16\"", "precision = \"fp8\""), "precision");
}

TEST(ModelFile, SyntaxErrorHasALine) {
  expect_error("name = \"x\"\nfamily = \n", "model.toml:2");
}

TEST(ModelFile, SequenceLongerThanPositions) {
  expect_error(replace(pythia_70m(), "seq_len = 2048", "seq_len = 4096"), "max_position");
}

// The HF config fields the models take from the catalog (docs/catalog.md): defaults are
// transformers' own, given values come back as written, bad ones name their field.
std::string catalog_file(const std::string& name) {
  return read_file(test::catalog().model(name).source_path);
}

// `name`'s catalog file with `keys` added at the top of [arch].
std::string with_arch_keys(const std::string& name, const std::string& keys) {
  return replace(catalog_file(name), "[arch]\n", "[arch]\n" + keys);
}

ModelSpec load_text(const std::string& contents) {
  return load_model_file(test::write_temp_file("fields.toml", contents));
}

TEST(ModelFields, DefaultsAreTransformers) {
  const ArchSpec neox = test::catalog().model("pythia-70m").arch;
  EXPECT_EQ(neox.rotary_emb_base, 10000.0);
  EXPECT_EQ(neox.initializer_range, 0.02);
  const ArchSpec roberta = test::catalog().model("roberta").arch;
  EXPECT_EQ(roberta.pad_token_id, 1);
  EXPECT_EQ(roberta.bos_token_id, 0);
  EXPECT_EQ(roberta.eos_token_id, 2);
  EXPECT_EQ(test::catalog().model("vit").arch.attention_probs_dropout_prob, 0.0);
  const ArchSpec convnext = test::catalog().model("convnext-large-1k").arch;
  EXPECT_EQ(convnext.drop_path_rate, 0.0);
  EXPECT_EQ(convnext.layer_scale_init_value, 1e-6);
  const ArchSpec mamba = test::catalog().model("mamba").arch;
  EXPECT_EQ(mamba.initializer_range, 0.1);  // MambaConfig's default, not 0.02
  EXPECT_EQ(mamba.time_step_min, 0.001);
  EXPECT_EQ(mamba.time_step_max, 0.1);
  EXPECT_EQ(mamba.time_step_floor, 1e-4);
  EXPECT_EQ(mamba.time_step_scale, 1.0);
}

TEST(ModelFields, GivenValuesAreRead) {
  const ArchSpec neox =
      load_text(
          with_arch_keys("pythia-70m", "rotary_emb_base = 500000\ninitializer_range = 0.01\n"))
          .arch;
  EXPECT_EQ(neox.rotary_emb_base, 500000.0);
  EXPECT_EQ(neox.initializer_range, 0.01);
  const ArchSpec roberta = load_text(with_arch_keys("roberta",
                                                    "bos_token_id = 5\neos_token_id = 6\n"
                                                    "initializer_range = 0.03\n"))
                               .arch;
  EXPECT_EQ(roberta.bos_token_id, 5);
  EXPECT_EQ(roberta.eos_token_id, 6);
  EXPECT_EQ(roberta.initializer_range, 0.03);
  EXPECT_EQ(load_text(with_arch_keys("vit", "attention_probs_dropout_prob = 0.1\n"))
                .arch.attention_probs_dropout_prob,
            0.1);
  const ArchSpec convnext =
      load_text(with_arch_keys("convnext-large-1k",
                               "drop_path_rate = 0.5\nlayer_scale_init_value = 0.25\n"))
          .arch;
  EXPECT_EQ(convnext.drop_path_rate, 0.5);
  EXPECT_EQ(convnext.layer_scale_init_value, 0.25);
  const ArchSpec mamba = load_text(with_arch_keys("mamba",
                                                  "time_step_min = 0.002\ntime_step_max = 0.2\n"
                                                  "time_step_floor = 0.0\ntime_step_scale = 2.0\n"
                                                  "initializer_range = 0.02\n"))
                             .arch;
  EXPECT_EQ(mamba.time_step_min, 0.002);
  EXPECT_EQ(mamba.time_step_max, 0.2);
  EXPECT_EQ(mamba.time_step_floor, 0.0);
  EXPECT_EQ(mamba.time_step_scale, 2.0);
  EXPECT_EQ(mamba.initializer_range, 0.02);
}

TEST(ModelFields, BadValuesNameTheirField) {
  expect_error(with_arch_keys("pythia-70m", "rotary_emb_base = 0\n"),
               "[arch]: rotary_emb_base: must be greater than 1");
  expect_error(with_arch_keys("pythia-70m", "initializer_range = -0.02\n"),
               "[arch]: initializer_range: must be positive");
  expect_error(with_arch_keys("roberta", "eos_token_id = 50264\n"),  // <mask>
               "[arch]: eos_token_id: 50264 is not in [0, vocab_size - 1)");
  expect_error(with_arch_keys("roberta", "bos_token_id = -1\n"), "[arch]: bos_token_id");
  expect_error(with_arch_keys("vit", "attention_probs_dropout_prob = 1.0\n"),
               "[arch]: attention_probs_dropout_prob: must be in [0, 1)");
  expect_error(with_arch_keys("convnext-large-1k", "drop_path_rate = 1.5\n"),
               "[arch]: drop_path_rate: must be in [0, 1)");
  expect_error(with_arch_keys("convnext-large-1k", "layer_scale_init_value = 0.0\n"),
               "[arch]: layer_scale_init_value: must be positive");
  expect_error(with_arch_keys("mamba", "time_step_min = 0.5\n"),  // above time_step_max 0.1
               "[arch]: time_step_min: must be in (0, time_step_max");
  expect_error(with_arch_keys("mamba", "time_step_scale = 0\n"), "[arch]: time_step_scale");
  expect_error(with_arch_keys("convnext-large-1k", "drop_path_rate = \"high\"\n"),
               "drop_path_rate: must be a number");
}

// wsd's decay length is required with it, bounded by what warm-up leaves, and refused elsewhere.
TEST(ModelFields, DecayStepsBelongToWsd) {
  const std::string smollm = read_file(test::catalog().model("smollm-135m").source_path);
  expect_error(replace(smollm, "decay_steps = 120000", "decay_steps = 0"),
               "[recipe]: decay_steps: must be in [1, train_steps - warmup_steps]");
  expect_error(replace(smollm, "decay_steps = 120000", "decay_steps = 599000"),
               "[recipe]: decay_steps: must be in [1, train_steps - warmup_steps]");
  expect_error(replace(pythia_70m(), "warmup_steps = 1430", "warmup_steps = 1430\ndecay_steps = 5"),
               "[recipe]: decay_steps: applies to schedule \"wsd\" only");
  expect_error(replace(smollm, "schedule = \"wsd\"", "schedule = \"trapezoid\""),
               "'trapezoid' is not one of cosine, linear, constant or wsd");
}

// Each field belongs to its family: elsewhere it is an unknown key, as a typo would be.
TEST(ModelFields, FieldOfAnotherFamilyIsUnknown) {
  expect_error(with_arch_keys("pythia-70m", "drop_path_rate = 0.1\n"),
               "drop_path_rate: unknown key");
  expect_error(with_arch_keys("vit", "rotary_emb_base = 10000\n"), "rotary_emb_base: unknown key");
  expect_error(with_arch_keys("convnext-large-1k", "eos_token_id = 2\n"),
               "eos_token_id: unknown key");
}

// A name is shown and copied into every row: a few hundred bytes at most, from any file. The
// refusal names the file and the key, and quotes no part of the name.
TEST(ModelFile, ANameLongerThanTheBoundIsRefused) {
  const std::string long_name(kMaxNameBytes + 1, 'n');
  const std::string error = load_error(replace(pythia_70m(), "pythia-70m\"", long_name + "\""));
  EXPECT_NE(error.find("model.toml: name: a name of 257 bytes; names are at most 256 bytes"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("nnnn"), std::string::npos) << error;
  const std::string at_bound(kMaxNameBytes, 'n');
  EXPECT_EQ(load_error(replace(pythia_70m(), "pythia-70m\"", at_bound + "\"")), "");
  // A newline or NUL in a name would break every table row and script line that shows it.
  for (const char* escaped : {"a\\nb", "a\\u0000b", "a\\tb"}) {
    const std::string e =
        load_error(replace(pythia_70m(), "pythia-70m\"", escaped + std::string("\"")));
    EXPECT_NE(e.find("model.toml: name: a name with a control character"), std::string::npos)
        << escaped << ": " << e;
  }
}

// A file past any of gpudays' is refused by its size, before the parser holds it several times
// over.
TEST(ModelFile, AFileOverFourMiBIsRefusedBeforeParsing) {
  const std::string padding = "# " + std::string(1 << 20, 'x') + "\n";
  std::string huge = pythia_70m();
  for (int i = 0; i < 5; ++i) huge += padding;
  const std::string error = load_error(huge);
  EXPECT_NE(error.find("model.toml: a file of 5.0 MiB; gpudays' TOML files are at most 4 MiB"),
            std::string::npos)
      << error;
  std::string padded = pythia_70m();
  for (int i = 0; i < 3; ++i) padded += padding;
  EXPECT_EQ(load_error(padded), "");  // a comment of 3 MiB is still a model file
}

TEST(GpuFile, ALongNameOrAliasIsRefused) {
  const std::string a100 = read_file(test::catalog().gpu("a100").source_path);
  const std::string long_name(1000, 'g');
  for (const auto& [from, key] : {std::pair<std::string, std::string>{"\"a100\"", "aliases"},
                                  {"\"a100-80gb-sxm\"", "name"}}) {
    const std::string path =
        test::write_temp_file("gpu.toml", replace(a100, from, "\"" + long_name + "\""));
    try {
      load_gpu_file(path);
      FAIL() << "no error for a long " << key;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": " + key + ": a name of 1000 bytes"),
                std::string::npos)
          << e.what();
    }
  }
}

// --model, --gpu, --gpus: the same bound on the command line, one line and exit 2.
TEST(NameFlags, ANameLongerThanTheBoundIsRefused) {
  const std::string long_name(kMaxNameBytes + 1, 'x');
  for (const std::string& args : {"plan --gpu a100 --model " + long_name,
                                  "plan --model pythia-70m --gpu " + long_name,
                                  "cost --model pythia-70m --gpus a100," + long_name}) {
    const auto r = test::run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args.substr(0, 40);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("a name of 257 bytes; names are at most 256 bytes"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("xxxx"), std::string::npos) << r.err;
  }
}

TEST(GpuFile, NegativeBandwidthIsRejected) {
  const std::string a100 = read_file(test::catalog().gpu("a100").source_path);
  const std::string path = test::write_temp_file(
      "gpu.toml", replace(a100, "bandwidth_gb_per_s = 2039.0", "bandwidth_gb_per_s = -1"));
  try {
    load_gpu_file(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth_gb_per_s"), std::string::npos) << e.what();
  }
}

// Sizes past any real model are refused before they reach the planner's arithmetic (a global batch
// of 2^62 used to overflow the micro-batch doubling and end in SIGFPE).
TEST(ModelFile, SizesBeyondAnyModelAreRefused) {
  expect_error(replace(pythia_70m(), "global_batch = 1024", "global_batch = 4611686018427387904"),
               "[recipe]: global_batch: must be in [1, 1073741824]");
  expect_error(replace(replace(pythia_70m(), "seq_len = 2048", "seq_len = 1000000000000"),
                       "max_position_embeddings = 2048",
                       "max_position_embeddings = 1000000000000"),
               "[arch]: seq_len: must be in [1, 16777216]");
  expect_error(replace(pythia_70m(), "d_model = 512", "d_model = 4294967296"), "d_model");
}

// Found by the model_toml fuzz target (UBSan): a ViT's image_size / patch_size squared overflowed
// before the sizes were checked, and more than 63 ConvNeXt stages overflowed the stride's shift.
// Both are now one-line errors naming the field, and `plan` exits 2 on them.
TEST(ModelFile, SizesAreCheckedBeforeTheyAreMultiplied) {
  const std::string vit =
      replace(replace(catalog_file("vit"), "image_size = 224", "image_size = 4294967296"),
              "patch_size = 16",
              "patch_size = 1");
  expect_error(vit, "[arch]: image_size: must be in [1, 65536]");
  std::string stages = "depths = [1";
  std::string widths = "hidden_sizes = [8";
  for (int i = 1; i < 70; ++i) stages += ", 1", widths += ", 8";
  std::string convnext = catalog_file("convnext-large-1k");
  convnext = replace(convnext, "depths = [3, 3, 27, 3]", stages + "]");
  const size_t widths_at = convnext.find("hidden_sizes = [");
  convnext.replace(widths_at, convnext.find(']', widths_at) - widths_at, widths);
  expect_error(convnext, "[arch]: depths: 70 stages; at most 16");
  const test::CommandResult r =
      test::run_gpudays("plan --gpu a100 --model-file " + test::write_temp_file("vit.toml", vit));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("image_size"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Found by the model_toml fuzz target (UBSan, in the exact parameter count): fields no check
// bounded, or bounded only one at a time, overflowed their products.
TEST(ModelFile, FieldsThatMultiplyAreBounded) {
  expect_error(
      replace(
          catalog_file("roberta"), "type_vocab_size = 1", "type_vocab_size = 9223372036854775807"),
      "[arch]: type_vocab_size: must be in [1, 16777216]");
  expect_error(replace(catalog_file("roberta"),
                       "max_position_embeddings = 514",
                       "max_position_embeddings = 4611686018427387904"),
               "[arch]: max_position_embeddings: must be in [1, 33554432]");
  expect_error(
      replace(catalog_file("vit"), "num_channels = 3", "num_channels = 9223372036854775807"),
      "[arch]: num_channels: must be in [1, 1024]");
  expect_error(replace(catalog_file("convnext-large-1k"), "num_channels = 3", "num_channels = 0"),
               "[arch]: num_channels: must be in [1, 1024]");
  expect_error(replace(replace(catalog_file("mamba"), "expand = 2", "expand = 1048576"),
                       "d_model = 2560",
                       "d_model = 1048576"),
               "[arch]: expand: expand x d_model = 1048576 x 1048576 must be at most 1048576");
  expect_error(replace(catalog_file("pythia-70m"), "rotary_pct = 0.25", "rotary_pct = 0.03"),
               "[arch]: rotary_pct: 0.03 x head size 64 gives 1 rotary dimension per head; must "
               "be even and at least 2");
  expect_error(replace(catalog_file("mamba"), "d_conv = 4", "d_conv = 8192"),
               "[arch]: d_conv: must be at most seq_len = 4096 (a wider kernel reads only "
               "padding), is 8192");
}

std::string gpu_error(const std::string& from, const std::string& to) {
  const std::string a100 = read_file(test::catalog().gpu("a100").source_path);
  const std::string path = test::write_temp_file("gpu.toml", replace(a100, from, to));
  try {
    load_gpu_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// NaN passes "<= 0" checks: every TOML number must be finite; powers and prices are not negative.
TEST(GpuFile, NonFiniteAndNegativeFiguresAreRejected) {
  EXPECT_NE(gpu_error("fp32 = 19.5", "fp32 = nan").find("fp32: must be a finite number"),
            std::string::npos);
  EXPECT_NE(gpu_error("fp32 = 19.5", "fp32 = inf").find("fp32: must be a finite number"),
            std::string::npos);
  EXPECT_NE(gpu_error("tdp_w = 400.0", "tdp_w = -400.0").find("tdp_w"), std::string::npos);
  EXPECT_NE(gpu_error("purchase_usd = 19000.0", "purchase_usd = nan").find("purchase_usd"),
            std::string::npos);
  EXPECT_NE(gpu_error("purchase_usd = 19000.0", "purchase_usd = -1.0").find("purchase_usd"),
            std::string::npos);
}

// The ceiling of fp32 on the CUDA cores is its own where measured (docs/catalog.md); both
// fractions are bounded (a GeForce card may pass its rated peak by a few percent, not a fifth).
TEST(GpuFile, CeilingFractionsAreBounded) {
  const std::string tensor = "fraction_of_peak = 0.869";
  EXPECT_EQ(gpu_error(tensor, "fraction_of_peak = 1.065"), "");
  EXPECT_NE(
      gpu_error(tensor, "fraction_of_peak = 1.5").find("fraction_of_peak: must be in (0, 1.2]"),
      std::string::npos);
  const std::string fp32 = "fp32_fraction_of_peak = 0.98";
  EXPECT_EQ(gpu_error(fp32, "fp32_fraction_of_peak = 0.9"), "");
  EXPECT_NE(gpu_error(fp32, "fp32_fraction_of_peak = 0")
                .find("fp32_fraction_of_peak: must be in (0, 1.2]"),
            std::string::npos);
}

// Measured per dtype: a V100's SGEMM reaches more of its fp32 peak than its fp16 GEMM of the
// tensor-core peak; an RTX 3090's fp16 passes its rated peak, its SGEMM does not fill the
// doubled FP32 datapath (configs/gpus/*.toml).
TEST(GpuFile, TheMatmulDtypePicksItsCeiling) {
  const GpuSpec& v100 = test::catalog().gpu("v100-16gb");
  EXPECT_DOUBLE_EQ(matmul_peak(v100, Precision::kFp16, false).ceiling_fraction, 0.76);
  EXPECT_DOUBLE_EQ(matmul_peak(v100, Precision::kFp32, true).ceiling_fraction, 0.90);
  const GpuSpec& rtx = test::catalog().gpu("rtx-3090");
  EXPECT_DOUBLE_EQ(matmul_peak(rtx, Precision::kFp16, false).ceiling_fraction, 1.08);
  EXPECT_DOUBLE_EQ(matmul_peak(rtx, Precision::kFp32, false).ceiling_fraction, 0.69);
  EXPECT_DOUBLE_EQ(matmul_peak(rtx, Precision::kFp32, true).ceiling_fraction, 1.08);  // TF32
  // An A100's SGEMM fills more of its fp32 peak than its best GEMM of the tensor-core peak.
  const GpuSpec& a100 = test::catalog().gpu("a100");
  EXPECT_DOUBLE_EQ(matmul_peak(a100, Precision::kFp32, false).ceiling_fraction, 0.98);
  EXPECT_DOUBLE_EQ(matmul_peak(a100, Precision::kBf16, false).ceiling_fraction, 0.869);
  // Without an fp32 figure, fp32 takes the tensor-core fraction.
  const std::string without = replace(read_file(a100.source_path), "fp32_fraction_of_peak", "#");
  const GpuSpec unmeasured = load_gpu_file(test::write_temp_file("gpu.toml", without));
  EXPECT_DOUBLE_EQ(matmul_peak(unmeasured, Precision::kFp32, false).ceiling_fraction, 0.869);
}

// Found by the gpu_toml fuzz target's planning invariant: a positive figure near 0 passed the
// checks and made step times and training days infinite (exit 0). Figures have physical minimums.
TEST(GpuFile, FiguresNearZeroAreRejected) {
  EXPECT_NE(gpu_error("fp32 = 19.5", "fp32 = 1e-300").find("fp32: must be in [0.001, 100000]"),
            std::string::npos);
  EXPECT_NE(gpu_error("bandwidth_gb_per_s = 2039.0", "bandwidth_gb_per_s = 1e-300")
                .find("bandwidth_gb_per_s: must be at least 0.001 GB/s"),
            std::string::npos);
  EXPECT_NE(gpu_error("gpu_link_gb_per_s = 300.0", "gpu_link_gb_per_s = 1e-300")
                .find("gpu_link_gb_per_s: must be at least"),
            std::string::npos);
  EXPECT_EQ(gpu_error("fp32 = 19.5", "fp32 = 0.001"), "");
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(test::write_temp_file("tiny-peak/x", "")).parent_path();
  fs::create_directories(dir / "models");
  fs::create_directories(dir / "gpus");
  const std::string a100 = read_file(test::catalog().gpu("a100").source_path);
  std::ofstream(dir / "gpus" / "a.toml") << replace(a100, "fp32 = 19.5", "fp32 = 1e-300");
  std::ofstream(dir / "models" / "m.toml") << pythia_70m();
  const test::CommandResult r =
      test::run_gpudays("--config-dir " + dir.string() + " plan --model pythia-70m --gpu a100");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("fp32: must be in [0.001, 100000]"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Found by the hostile-input review: names, generations, links, memory and prices that no GPU has
// were accepted (an empty alias listed as ", ,"; "collectives over carrier-pigeon"; 8 EiB of
// memory; a price of 1e308 that overflowed the costs). Each names the file and key.
TEST(GpuFile, NamesLinksMemoryAndPricesAreChecked) {
  const auto expect =
      [](const std::string& from, const std::string& to, const std::string& needle) {
        const std::string error = gpu_error(from, to);
        EXPECT_NE(error.find(needle), std::string::npos) << to << ": " << error;
      };
  expect("name = \"a100-80gb-sxm\"", "name = \"\"", "gpu.toml: name: must not be empty");
  expect("aliases = [\"a100\"]", "aliases = [\"\"]", "gpu.toml: aliases: an empty alias");
  expect("architecture = \"ampere\"",
         "architecture = \"bogus\"",
         "architecture: 'bogus' is not one of volta, turing, ampere");
  expect("gpu_link = \"nvlink3\"",
         "gpu_link = \"carrier-pigeon\"",
         "[links]: gpu_link: 'carrier-pigeon' is not one of nvlink1");
  expect("bytes = 85899345920",
         "bytes = 9223372036854775807",
         "[memory]: bytes: must be in [1, 1099511627776] (1 TiB)");
  expect("purchase_usd = 19000.0",
         "purchase_usd = 1e308",
         "[price]: purchase_usd: must be in [0, 1e+07]");
  EXPECT_EQ(gpu_error("purchase_usd = 19000.0", "purchase_usd = 1e7"), "");
}

// A GPU file whose bf16 peak contradicts its generation is its own error: it was blamed on the
// first published case that trained in bf16 on it.
TEST(GpuFile, Bf16AndTf32FollowTheGeneration) {
  EXPECT_NE(gpu_error("bf16 = 312.0", "bf16 = 0.0")
                .find("gpu.toml [peak_tflops]: bf16: missing or 0, but compute capability 8 "
                      "(Ampere or newer) has bf16"),
            std::string::npos)
      << gpu_error("bf16 = 312.0", "bf16 = 0.0");
  EXPECT_NE(gpu_error("compute_capability = 8.0", "compute_capability = 7.0")
                .find("bf16: 312, but compute capability 7 (before Ampere) has no bf16"),
            std::string::npos)
      << gpu_error("compute_capability = 8.0", "compute_capability = 7.0");
}

// The optimizer's and the norm's epsilons divide: positive (and below 1); weight decay is not
// negative.
TEST(ModelFields, EpsilonsAndWeightDecayAreChecked) {
  const std::string p70m = pythia_70m();
  expect_error(replace(p70m, "eps = 1e-8", "eps = -1e-8"), "[recipe]: eps: must be in (0, 1)");
  expect_error(replace(p70m, "eps = 1e-8", "eps = 0.0"), "[recipe]: eps: must be in (0, 1)");
  expect_error(replace(p70m, "weight_decay = 0.01", "weight_decay = -5.0"),
               "[recipe]: weight_decay: must be >= 0");
  expect_error(replace(p70m, "layer_norm_eps = 1e-5", "layer_norm_eps = -1.0"),
               "[arch]: layer_norm_eps: must be in (0, 1), is -1");
  expect_error(replace(catalog_file("vit"), "layer_norm_eps = 1e-12", "layer_norm_eps = 0.0"),
               "[arch]: layer_norm_eps: must be in (0, 1)");
  EXPECT_EQ(load_error(replace(p70m, "weight_decay = 0.01", "weight_decay = 0.0")), "");
}

// Two GPU files claiming one alias: the catalog refuses to load instead of letting one win; so is
// a file that names one alias twice, or the host CPU.
TEST(GpuFile, AnAliasNamesOneGpu) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(test::write_temp_file("dup-catalog/x", "")).parent_path();
  fs::create_directories(dir / "models");
  fs::create_directories(dir / "gpus");
  const std::string a100 = read_file(test::catalog().gpu("a100").source_path);
  const std::string h100 = read_file(test::catalog().gpu("h100").source_path);
  std::ofstream(dir / "gpus" / "a.toml") << a100;
  // Names are looked up ignoring case, so "A100" claims a100 too; "cpu" is the host CPU's name.
  const std::pair<std::string, std::string> cases[] = {
      {"\"a100\", ", "'a100' already names GPU"},
      {"\"A100\", ", "'a100' already names GPU"},
      {"\"cpu\", ", "aliases: 'cpu' names the host CPU; choose another"},
      {"\"h-one\", \"H-One\", ", "aliases: 'H-One' is given twice (names ignore case)"}};
  for (const auto& [added, needle] : cases) {
    std::ofstream(dir / "gpus" / "h.toml") << replace(h100, "aliases = [", "aliases = [" + added);
    try {
      Catalog::load({dir.string()});
      ADD_FAILURE() << added << ": no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

// Two model files of one name: the error names both, so that the user can keep one.
TEST(ModelFile, ANameUsedTwiceNamesBothFiles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(test::write_temp_file("twice-catalog/x", "")).parent_path();
  fs::create_directories(dir / "models");
  fs::create_directories(dir / "gpus");
  const std::string p70m = read_file(test::catalog().model("pythia-70m").source_path);
  std::ofstream(dir / "models" / "a.toml") << p70m;
  std::ofstream(dir / "models" / "b.toml") << p70m;
  try {
    Catalog::load({dir.string()});
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model name 'pythia-70m' is used twice"), std::string::npos) << what;
    EXPECT_NE(what.find((dir / "models" / "a.toml").string()), std::string::npos) << what;
    EXPECT_NE(what.find((dir / "models" / "b.toml").string()), std::string::npos) << what;
  }
}

// A TOML file the process may not read says why (toml++ says only that it could not open it).
TEST(TomlFields, AnUnreadableFileSaysWhy) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file of mode 000";
  const std::string path = test::write_temp_file("unreadable-model.toml", "name = \"x\"\n");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  try {
    TomlFields::parse_file(path);
    FAIL() << "read an unreadable file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": cannot read file: Permission denied"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

// A subnormal number (1e-320) in a TOML file passes every "above 0" check and then divides to
// infinity: it is refused where it is read, in any field; 0 and the smallest normal pass.
TEST(TomlFields, ASubnormalNumberIsRefused) {
  const TomlFields t = TomlFields::parse_text(
      "tdp_w = 1e-320\nzero = 0.0\nsmall = 2.2250738585072014e-308\n", "gpu.toml");
  try {
    t.get_double("tdp_w");
    FAIL() << "read 1e-320";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "gpu.toml: tdp_w: 1e-320 is too small to tell from 0; give 0 or a number of at "
              "least 2.22507e-308");
  }
  EXPECT_EQ(t.get_double("zero"), 0.0);
  EXPECT_GT(t.get_double("small"), 0.0);
}

}  // namespace
}  // namespace gpudays
