// The published-measurement set: every shipped file loads and resolves against the catalog, and
// bad input gets a one-line InputError naming the file, the case and the key.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <fmt/format.h>

#include "catalog/measurement.h"
#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "test_util.h"

namespace gpudays {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(Measurements, EveryShippedFileLoadsAndResolves) {
  const Catalog& catalog = test::catalog();
  for (const MeasurementFile& file : load_measurements(catalog)) {
    EXPECT_FALSE(file.cases.empty()) << file.source.path;
    for (const Measurement& c : file.cases) {
      SCOPED_TRACE(file.source.id + " / " + c.name);
      EXPECT_EQ(catalog.gpu(c.gpu).name, c.gpu);
      if (c.model_from_catalog) {
        EXPECT_EQ(catalog.model(c.model_name).name, c.model.name);
      }
      EXPECT_NO_THROW(validate_model(c.model));
      EXPECT_FALSE(c.citation.empty());
      EXPECT_EQ(c.split, file.source.split);
    }
  }
}

// The validation set: at least 30 cases from at least 5 independent sources; both halves hold A100
// and H100 cases; untrusted sources stay out of both halves.
TEST(Measurements, CoverageAndSplit) {
  std::set<std::string> sources, fit, check;
  int cases = 0;
  for (const MeasurementFile& file : load_measurements(test::catalog())) {
    EXPECT_EQ(file.source.trusted, file.source.split != MeasurementSplit::kExcluded);
    if (!file.source.trusted) continue;
    sources.insert(file.source.id);
    for (const Measurement& c : file.cases) {
      ++cases;
      const std::string kind = starts_with(c.gpu, "a100")   ? "a100"
                               : starts_with(c.gpu, "h100") ? "h100"
                                                            : c.gpu;
      (c.split == MeasurementSplit::kFit ? fit : check).insert(kind);
    }
  }
  EXPECT_GE(cases, 30);
  EXPECT_GE(sources.size(), 5U);
  for (const auto* half : {&fit, &check}) {
    EXPECT_TRUE(half->contains("a100"));
    EXPECT_TRUE(half->contains("h100"));
  }
}

// A small valid file; each bad-input test edits one line of it.
const char* kValid = R"(
[source]
id = "meas"
title = "A paper"
citation = "Someone 2024, Table 1"
split = "fit"

[[cases]]
name = "one"
citation = "Table 1, row 1"
gpu = "a100-80gb-sxm"
gpus_per_node = 8
precision = "bf16"
micro_batch_size = 4
gradient_accumulation = 2
global_batch_size = 64
[cases.arch]
name = "tiny"
family = "gpt_neox"
n_layers = 2
d_model = 64
n_heads = 4
d_ffn = 256
vocab_size = 1000
seq_len = 128
[cases.published]
tokens_per_s = 8000.0
[cases.derived]
tokens_per_s_per_gpu = 1000.0
derivation = "tokens_per_s / 8 GPUs"
)";

std::string edit(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

std::string edit(const std::string& from, const std::string& to) {
  return edit(kValid, from, to);
}

// The first case of a file with these contents, loaded.
Measurement first_case(const std::string& contents) {
  return load_measurement_file(test::write_temp_file("meas.toml", contents), test::catalog())
      .cases.at(0);
}

std::string load_error(const std::string& contents) {
  const std::string path = test::write_temp_file("meas.toml", contents);
  try {
    load_measurement_file(path, test::catalog());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The error is one line and names the file and every `needles` part (case, table, key, problem).
void expect_error(const std::string& contents, std::initializer_list<std::string> needles) {
  const std::string error = load_error(contents);
  EXPECT_NE(error.find("meas.toml"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  for (const auto& needle : needles) {
    EXPECT_NE(error.find(needle), std::string::npos) << "'" << needle << "' not in: " << error;
  }
}

TEST(MeasurementFile, ValidFileLoads) {
  const auto file =
      load_measurement_file(test::write_temp_file("meas.toml", kValid), test::catalog());
  ASSERT_EQ(file.cases.size(), 1U);
  const Measurement& c = file.cases[0];
  EXPECT_EQ(file.source.split, MeasurementSplit::kFit);
  EXPECT_EQ(c.model.family, Family::kGptNeox);
  EXPECT_EQ(c.model.arch.seq_len, 128);
  EXPECT_EQ(c.gpus(), 8);
  EXPECT_EQ(*c.published.tokens_per_s, 8000.0);
  EXPECT_EQ(*c.derived_tokens_per_s_per_gpu, 1000.0);
  EXPECT_TRUE(c.representable());
  EXPECT_FALSE(c.published.approximate);
}

TEST(MeasurementFile, CatalogModelResolves) {
  const std::string text = edit(
      "[cases.arch]\nname = \"tiny\"\nfamily = \"gpt_neox\"\n"
      "n_layers = 2\nd_model = 64\nn_heads = 4\nd_ffn = 256\n"
      "vocab_size = 1000\nseq_len = 128\n",
      "model = \"pythia-160m\"\n");
  const std::string no_derived = text.substr(0, text.find("[cases.derived]"));
  const auto file =
      load_measurement_file(test::write_temp_file("meas.toml", no_derived), test::catalog());
  EXPECT_TRUE(file.cases[0].model_from_catalog);
  EXPECT_EQ(file.cases[0].model.arch.n_layers, 12);
}

TEST(MeasurementFile, UnknownKeyIsAnError) {
  expect_error(edit("gpus_per_node = 8", "gpus_per_node = 8\ncolour = 1"),
               {"case 'one'", "colour: unknown key"});
  expect_error(edit("tokens_per_s = 8000.0", "tokens_per_s = 8000.0\ntokens_per_sec = 1.0"),
               {"case 'one' [published]", "tokens_per_sec: unknown key"});
  expect_error(edit("seq_len = 128", "seq_len = 128\nrotary = 1"), {"[arch]", "rotary"});
  expect_error(edit("split = \"fit\"", "split = \"fit\"\nyear = 2024"),
               {"[source]", "year: unknown key"});
  expect_error(std::string(kValid) + "\n[extra]\nx = 1\n", {"extra: unknown key"});
  expect_error(edit("name = \"one\"", "name = \"\""), {"case ''", "name: must not be empty"});
}

TEST(MeasurementFile, NumbersMustBeFiniteAndInRange) {
  expect_error(edit("tokens_per_s = 8000.0", "tokens_per_s = nan"),
               {"case 'one' [published]", "tokens_per_s: must be a finite number"});
  expect_error(edit("tokens_per_s = 8000.0", "tokens_per_s = -8000.0"),
               {"[published]", "tokens_per_s: must be in [0.001, 1e+16] tokens/s, is -8000"});
  expect_error(edit("tokens_per_s = 8000.0", "tokens_per_s = 8000.0\nmfu = 1.2"), {"mfu"});
  expect_error(edit("gpus_per_node = 8", "gpus_per_node = 0"), {"gpus_per_node"});
}

// Found by the hostile-input review: step_time_ms = 1e300 spread errors of 300 digits into
// validate, plan and cost. Published figures lie in plausible ranges, each error naming the file,
// the case and the key.
TEST(MeasurementFile, PublishedFiguresArePlausible) {
  const std::string no_derived =
      std::string(kValid).substr(0, std::string(kValid).find("[cases.derived]"));
  const auto figure = [&](const std::string& line) {
    return edit(no_derived, "tokens_per_s = 8000.0", line);
  };
  expect_error(figure("step_time_ms = 1e300"),
               {"case 'one' [published]", "step_time_ms: must be in [0.001, 1e+09] ms, is 1e+300"});
  expect_error(figure("step_time_ms = 1e-300"), {"step_time_ms: must be in [0.001, 1e+09] ms"});
  expect_error(figure("step_time_s = 1e7"), {"step_time_s: must be in [1e-06, 1e+06] s"});
  expect_error(figure("tokens_per_s_per_gpu = 1e11"),
               {"tokens_per_s_per_gpu: must be in [0.001, 1e+10] tokens/s"});
  expect_error(figure("tflops_per_gpu = 1e6"), {"tflops_per_gpu: must be in [0.001, 100000]"});
  expect_error(figure("peak_memory_gib = 2048.0"),
               {"peak_memory_gib: must be in [0.001, 1024] GiB"});
  expect_error(edit("gpus_per_node = 8", "gpus_per_node = 8\ninter_node_gbit_per_s = 1e-300"),
               {"case 'one'", "inter_node_gbit_per_s: must be in [0.08, 80000] Gbit/s"});
  EXPECT_EQ(load_error(figure("step_time_ms = 1e9")), "");
}

// The model code, autocast's fp32 weights and the configured dropout (docs/catalog.md).
TEST(MeasurementFile, ImplementationKeysAreChecked) {
  const auto file = load_measurement_file(
      test::write_temp_file("meas.toml",
                            edit("precision = \"bf16\"",
                                 "precision = \"bf16\"\nimplementation = \"huggingface\"\n"
                                 "autocast_fp32_weights = true")),
      test::catalog());
  EXPECT_EQ(file.cases[0].implementation, "huggingface");
  EXPECT_TRUE(file.cases[0].autocast_fp32_weights);
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nimplementation = \"megatron\""),
               {"case 'one'", "implementation", "llama_reference"});
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nimplementation = \"mamba_ssm\""),
               {"case 'one'", "implementation", "Mamba models only"});
  expect_error(edit("precision = \"bf16\"", "precision = \"fp32\"\nautocast_fp32_weights = true"),
               {"case 'one'", "autocast_fp32_weights", "mixed precision"});
  expect_error(edit("seq_len = 128", "seq_len = 128\ndropout = 1.5"), {"[arch]", "dropout"});
  // use_cache in training and a loop holding the model's output are transformers' behaviour:
  // with its code, nobody else's.
  const auto with_keys = [](const std::string& keys) {
    return edit("precision = \"bf16\"", "precision = \"bf16\"\n" + keys);
  };
  const std::string hf = "implementation = \"huggingface\"\n";
  EXPECT_TRUE(first_case(with_keys(hf + "returns_key_values = true")).returns_key_values);
  EXPECT_TRUE(first_case(with_keys(hf + "holds_output = true")).holds_output);
  EXPECT_TRUE(first_case(with_keys(hf + "gradients_freed = true")).gradients_freed);
  EXPECT_FALSE(first_case(with_keys(hf)).gradients_freed);  // absent: they stay between steps
  expect_error(with_keys(hf + "gradients_freed = 1"), {"case 'one'", "gradients_freed"});
  // The engine's own loop is planned from its configuration; DeepSpeed keeps its buffers.
  expect_error(with_keys("gradients_freed = true"), {"case 'one'", "gradients_freed", "engine"});
  expect_error(with_keys(hf + "sharding = \"zero_2\"\ngradients_freed = true"),
               {"case 'one'", "gradients_freed", "ZeRO"});
  for (const std::string key : {"returns_key_values", "holds_output"}) {
    expect_error(with_keys(key + " = true"),
                 {"case 'one'", key, "implementation = \"huggingface\""});
  }
  expect_error(with_keys(hf + "holds_output = \"yes\""), {"case 'one'", "holds_output"});
  // ... and a decoder's: an encoder (RoBERTa) returns no keys and values.
  const std::string catalog_model = edit(
      "[cases.arch]\nname = \"tiny\"\nfamily = \"gpt_neox\"\n"
      "n_layers = 2\nd_model = 64\nn_heads = 4\nd_ffn = 256\n"
      "vocab_size = 1000\nseq_len = 128\n",
      "model = \"roberta\"\n");
  expect_error(edit(catalog_model.substr(0, catalog_model.find("[cases.derived]")),
                    "precision = \"bf16\"",
                    "precision = \"bf16\"\nimplementation = \"huggingface\"\n"
                    "returns_key_values = true"),
               {"case 'one'", "returns_key_values", "causal language model"});
  // A vision model returns no language model's logits to hold.
  const std::string vit = catalog_model.substr(0, catalog_model.find("[cases.derived]"));
  expect_error(edit(edit(vit, "model = \"roberta\"", "model = \"vit\""),
                    "precision = \"bf16\"",
                    "precision = \"bf16\"\nimplementation = \"huggingface\"\nholds_output = true"),
               {"case 'one'", "holds_output", "a language model"});
  // fp16 autocast without a GradScaler (timm's benchmark); the other precisions scale nothing.
  const auto unscaled = load_measurement_file(
      test::write_temp_file(
          "meas.toml", edit("precision = \"bf16\"", "precision = \"fp16\"\nloss_scaling = false")),
      test::catalog());
  EXPECT_FALSE(unscaled.cases[0].loss_scaling);
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nloss_scaling = false"),
               {"case 'one'", "loss_scaling", "only fp16"});
  // apex AMP O2: the model in half precision, never with autocast's fp32 weights or in fp32.
  const auto o2 = load_measurement_file(
      test::write_temp_file(
          "meas.toml",
          edit("precision = \"bf16\"", "precision = \"fp16\"\nhalf_precision_model = true")),
      test::catalog());
  EXPECT_TRUE(o2.cases[0].half_precision_model);
  expect_error(edit("precision = \"bf16\"", "precision = \"fp32\"\nhalf_precision_model = true"),
               {"case 'one'", "half_precision_model", "mixed precision"});
  expect_error(
      edit("precision = \"bf16\"",
           "precision = \"bf16\"\nhalf_precision_model = true\nautocast_fp32_weights = true"),
      {"case 'one'", "half_precision_model", "autocast_fp32_weights"});
  // A half-precision model's plain attention, as its code runs it: the kernels before the softmax
  // and heads taken by strides; neither describes a fused or compiled attention.
  const std::string o2_text =
      edit("precision = \"bf16\"", "precision = \"fp16\"\nhalf_precision_model = true");
  const auto nvidia_bert = load_measurement_file(
      test::write_temp_file(
          "meas.toml",
          edit(o2_text,
               "half_precision_model = true",
               "half_precision_model = true\nattention_score_kernels = 2\nstrided_heads = true")),
      test::catalog());
  EXPECT_EQ(nvidia_bert.cases[0].attention_score_kernels, 2);
  EXPECT_TRUE(nvidia_bert.cases[0].strided_heads);
  EXPECT_FALSE(o2.cases[0].attention_score_kernels.has_value());
  EXPECT_FALSE(o2.cases[0].strided_heads);
  expect_error(edit(o2_text,
                    "half_precision_model = true",
                    "half_precision_model = true\nattention_score_kernels = 4"),
               {"case 'one'", "attention_score_kernels", "must be 1, 2 or 3"});
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nattention_score_kernels = 2"),
               {"case 'one'", "attention_score_kernels", "half_precision_model = true"});
  expect_error(edit(o2_text,
                    "half_precision_model = true",
                    "half_precision_model = true\nfused_attention = true\nstrided_heads = true"),
               {"case 'one'", "strided_heads", "not with fused_attention"});
  // Autocast with an fp32 residual stream, ConvNeXt channels-last, Linear's bias by its own
  // kernel: each where it means something.
  const auto stream = load_measurement_file(
      test::write_temp_file(
          "meas.toml",
          edit("precision = \"bf16\"",
               "precision = \"bf16\"\nfp32_residual_stream = true\nlinear_bias_add = true")),
      test::catalog());
  EXPECT_TRUE(stream.cases[0].fp32_residual_stream);
  EXPECT_TRUE(stream.cases[0].linear_bias_add);
  expect_error(edit("precision = \"bf16\"", "precision = \"fp32\"\nfp32_residual_stream = true"),
               {"case 'one'", "fp32_residual_stream", "fp16 or bf16"});
  expect_error(edit(o2_text,
                    "half_precision_model = true",
                    "half_precision_model = true\nfp32_residual_stream = true"),
               {"case 'one'", "fp32_residual_stream", "without half_precision_model"});
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nchannels_last = true"),
               {"case 'one'", "channels_last", "not a convnext"});
  expect_error(
      edit("precision = \"bf16\"", "precision = \"bf16\"\ncompiled = true\nlinear_bias_add = true"),
      {"case 'one'", "linear_bias_add", "not with compiled"});
  // A fused optimizer is said where it ran (absent: it follows free-lunch).
  const auto fused = load_measurement_file(
      test::write_temp_file(
          "meas.toml",
          edit("precision = \"bf16\"", "precision = \"bf16\"\nfused_optimizer = true")),
      test::catalog());
  EXPECT_EQ(fused.cases[0].fused_optimizer, std::optional<bool>(true));
  EXPECT_FALSE(unscaled.cases[0].fused_optimizer.has_value());
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nfused_optimizer = \"yes\""),
               {"case 'one'", "fused_optimizer"});
  // A 2020-era fp16 optimizer: a half-precision fp16 model, DeepSpeed's at ZeRO stage 1 and
  // Megatron-LM's without sharding, never offloaded.
  const std::string half = "precision = \"fp16\"\nhalf_precision_model = true\n";
  EXPECT_EQ(
      first_case(edit("precision = \"bf16\"",
                      half + "sharding = \"zero_1\"\nfp16_optimizer = \"deepspeed_zero1_2020\""))
          .fp16_optimizer,
      "deepspeed_zero1_2020");
  EXPECT_EQ(first_case(edit("precision = \"bf16\"",
                            half + "sharding = \"none\"\nfp16_optimizer = \"megatron_2020\""))
                .fp16_optimizer,
            "megatron_2020");
  EXPECT_EQ(first_case(kValid).fp16_optimizer, "");
  expect_error(edit("precision = \"bf16\"",
                    "precision = \"bf16\"\nhalf_precision_model = true\nsharding = \"none\"\n"
                    "fp16_optimizer = \"megatron_2020\""),
               {"case 'one'", "fp16_optimizer", "half_precision_model"});
  expect_error(edit("precision = \"bf16\"",
                    half + "sharding = \"none\"\nfp16_optimizer = \"deepspeed_zero1_2020\""),
               {"case 'one'", "fp16_optimizer", "zero_1"});
  expect_error(edit("precision = \"bf16\"",
                    half + "sharding = \"zero_1\"\noffloading = true\n"
                           "fp16_optimizer = \"deepspeed_zero1_2020\""),
               {"case 'one'", "fp16_optimizer", "without offloading"});
  expect_error(edit("precision = \"bf16\"", half + "fp16_optimizer = \"apex\""),
               {"case 'one'", "fp16_optimizer", "megatron_2020"});
  // DeepSpeed's cpu_checkpointing keeps checkpointed inputs on the host: full checkpointing only.
  EXPECT_TRUE(first_case(edit("precision = \"bf16\"",
                              "precision = \"bf16\"\nactivation_checkpointing = \"full\"\n"
                              "cpu_checkpointing = true"))
                  .cpu_checkpointing);
  EXPECT_FALSE(first_case(kValid).cpu_checkpointing);
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\ncpu_checkpointing = true"),
               {"case 'one'", "cpu_checkpointing", "full"});
  const auto dropped = load_measurement_file(
      test::write_temp_file("meas.toml", edit("seq_len = 128", "seq_len = 128\ndropout = 0.1")),
      test::catalog());
  EXPECT_DOUBLE_EQ(dropped.cases[0].model.recipe.dropout, 0.1);
}

// A vision case says where its images came from and the host's cores that loaded them; a language
// model has no image loader.
TEST(MeasurementFile, ImageInputIsForVisionCases) {
  const std::string model = "model = \"convnext-large-1k\"\n";
  const std::string arch =
      "[cases.arch]\nname = \"tiny\"\nfamily = \"gpt_neox\"\n"
      "n_layers = 2\nd_model = 64\nn_heads = 4\nd_ffn = 256\n"
      "vocab_size = 1000\nseq_len = 128\n";
  std::string vision = edit(arch, model);
  vision = vision.substr(0, vision.find("[cases.derived]"));
  vision = edit(vision, "tokens_per_s = 8000.0", "samples_per_s = 800.0");
  const std::string loaded = edit(vision,
                                  "precision = \"bf16\"",
                                  "precision = \"bf16\"\nimage_input = \"jpeg-deit\"\n"
                                  "cpu_cores_per_gpu = 5");
  const auto file =
      load_measurement_file(test::write_temp_file("meas.toml", loaded), test::catalog());
  EXPECT_EQ(file.cases[0].image_input, "jpeg-deit");
  EXPECT_EQ(file.cases[0].cpu_cores_per_gpu, std::optional<int64_t>(5));
  const auto plain =
      load_measurement_file(test::write_temp_file("meas.toml", vision), test::catalog());
  EXPECT_TRUE(plain.cases[0].image_input.empty());
  EXPECT_FALSE(plain.cases[0].cpu_cores_per_gpu.has_value());
  expect_error(edit(vision, "precision = \"bf16\"", "precision = \"bf16\"\nimage_input = \"png\""),
               {"case 'one'", "image_input", "jpeg-deit"});
  expect_error(edit(vision, "precision = \"bf16\"", "precision = \"bf16\"\ncpu_cores_per_gpu = 0"),
               {"case 'one'", "cpu_cores_per_gpu", "positive"});
  expect_error(edit(vision, "precision = \"bf16\"", "precision = \"bf16\"\ncpu_cores_per_gpu = 4"),
               {"case 'one'", "cpu_cores_per_gpu", "needs image_input"});
  expect_error(edit(vision,
                    "precision = \"bf16\"",
                    "precision = \"bf16\"\nimage_input = \"synthetic\"\ncpu_cores_per_gpu = 4"),
               {"case 'one'", "cpu_cores_per_gpu", "loads nothing"});
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nimage_input = \"jpeg\""),
               {"case 'one'", "image_input", "only vision cases"});
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\ncpu_cores_per_gpu = 4"),
               {"case 'one'", "cpu_cores_per_gpu", "only vision cases"});
}

TEST(MeasurementFile, AnAttentionKernelNeedsTheFusedKernel) {
  const std::string fused =
      edit("precision = \"bf16\"", "precision = \"bf16\"\nfused_attention = true");
  const auto kernel = [](const std::string& text) { return first_case(text).attention_kernel; };
  EXPECT_EQ(kernel(fused), "");
  EXPECT_EQ(kernel(edit(fused,
                        "fused_attention = true",
                        "fused_attention = true\nattention_kernel = \"flash_attention_1\"")),
            "flash_attention_1");
  expect_error(edit(fused,
                    "fused_attention = true",
                    "fused_attention = true\nattention_kernel = \"flash_attention_3\""),
               {"case 'one'", "attention_kernel", "'flash_attention_3' is not one of"});
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\nattention_kernel = \"cudnn\""),
               {"case 'one'", "attention_kernel", "needs fused_attention = true"});
}

TEST(MeasurementFile, OffloadingNeedsAShardingStage) {
  const std::string offloaded = edit(
      "precision = \"bf16\"",
      "precision = \"bf16\"\nsharding = \"zero_2\"\noffloading = true\nhost_memory_gib = 1500");
  const Measurement m = first_case(offloaded);
  EXPECT_TRUE(m.offloading);
  EXPECT_EQ(m.host_memory_gib, 1500.0);
  EXPECT_FALSE(first_case(kValid).offloading);
  EXPECT_FALSE(first_case(kValid).host_memory_gib.has_value());
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\noffloading = true"),
               {"case 'one'", "offloading", "needs a sharding stage"});
  expect_error(edit(offloaded, "sharding = \"zero_2\"", "sharding = \"none\""),
               {"case 'one'", "offloading", "needs a sharding stage"});
  expect_error(edit(offloaded, "host_memory_gib = 1500", "host_memory_gib = -1"),
               {"case 'one'", "host_memory_gib"});
  expect_error(edit(offloaded, "sharding = \"zero_2\"", "sharding = \"fsdp_full_shard\""),
               {"case 'one'", "offloading", "needs a sharding stage"});
  expect_error(edit(offloaded, "offloading = true\n", ""),
               {"case 'one'", "host_memory_gib", "needs offloading = true"});
}

TEST(MeasurementFile, PeakMemoryMeasureNamesWhatThePeakCounts) {
  const std::string memory =
      edit("tokens_per_s = 8000.0", "tokens_per_s = 8000.0\npeak_memory_gib = 40.0");
  const auto measure = [](const std::string& text) {
    return first_case(text).published.peak_memory_measure;
  };
  EXPECT_EQ(measure(memory), "process");
  EXPECT_EQ(measure(edit(memory,
                         "peak_memory_gib = 40.0",
                         "peak_memory_gib = 40.0\npeak_memory_measure = \"reserved\"")),
            "reserved");
  expect_error(edit(memory,
                    "peak_memory_gib = 40.0",
                    "peak_memory_gib = 40.0\npeak_memory_measure = \"nvml\""),
               {"case 'one' [published]", "peak_memory_measure", "allocated"});
  expect_error(
      edit("tokens_per_s = 8000.0", "tokens_per_s = 8000.0\npeak_memory_measure = \"reserved\""),
      {"case 'one' [published]", "peak_memory_measure", "needs a peak"});
}

// GPT-2-style cases (learned position tables) add attention and MLP to the residual in turn;
// rotary ones run both on the same input unless the case says otherwise.
TEST(MeasurementFile, GptTwoStyleCasesHaveASequentialResidual) {
  const auto residual = [](const std::string& text) {
    return first_case(text).model.arch.use_parallel_residual;
  };
  const std::string gpt2 =
      edit("seq_len = 128", "seq_len = 128\nlearned_position_embeddings = true");
  EXPECT_TRUE(residual(kValid));
  EXPECT_FALSE(residual(gpt2));
  EXPECT_TRUE(residual(edit(gpt2, "seq_len = 128", "seq_len = 128\nuse_parallel_residual = true")));
  EXPECT_FALSE(residual(edit("seq_len = 128", "seq_len = 128\nuse_parallel_residual = false")));
}

// A selective run's share of checkpointed blocks, and the measured GPU variant's memory
// (docs/catalog.md).
TEST(MeasurementFile, CheckpointShareAndGpuVariantAreChecked) {
  const auto file = load_measurement_file(
      test::write_temp_file("meas.toml",
                            edit("precision = \"bf16\"",
                                 "precision = \"bf16\"\nactivation_checkpointing = \"selective\"\n"
                                 "checkpointed_block_share = 0.5\ngpu_note = \"a variant\"\n"
                                 "gpu_memory_gib = 96.0\ngpu_memory_bandwidth_gb_per_s = 2400.0")),
      test::catalog());
  EXPECT_DOUBLE_EQ(*file.cases[0].checkpointed_block_share, 0.5);
  EXPECT_DOUBLE_EQ(*file.cases[0].gpu_memory_gib, 96.0);
  EXPECT_DOUBLE_EQ(*file.cases[0].gpu_memory_bandwidth_gb_per_s, 2400.0);
  expect_error(edit("precision = \"bf16\"",
                    "precision = \"bf16\"\nactivation_checkpointing = \"full\"\n"
                    "checkpointed_block_share = 0.5"),
               {"case 'one'", "checkpointed_block_share", "selective"});
  expect_error(edit("precision = \"bf16\"",
                    "precision = \"bf16\"\nactivation_checkpointing = \"selective\"\n"
                    "checkpointed_block_share = 1.5"),
               {"checkpointed_block_share", "(0, 1]"});
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\ngpu_memory_gib = 96.0"),
               {"case 'one'", "gpu_memory_gib", "gpu_note"});
  expect_error(edit("precision = \"bf16\"",
                    "precision = \"bf16\"\ngpu_note = \"x\"\ngpu_memory_bandwidth_gb_per_s = -1"),
               {"gpu_memory_bandwidth_gb_per_s", "must be in [0.001, 1e+06] GB/s, is -1"});
}

// The measured GPUs' power limit: within (0, TDP], with a note (the A100 80GB SXM's TDP is 400 W).
TEST(MeasurementFile, AGpuPowerLimitIsBelowItsTdpAndNoted) {
  const auto file = load_measurement_file(
      test::write_temp_file(
          "meas.toml",
          edit("precision = \"bf16\"",
               "precision = \"bf16\"\ngpu_note = \"capped\"\ngpu_power_limit_w = 300.0")),
      test::catalog());
  EXPECT_DOUBLE_EQ(*file.cases[0].gpu_power_limit_w, 300.0);
  EXPECT_FALSE(first_case(kValid).gpu_power_limit_w);
  expect_error(edit("precision = \"bf16\"", "precision = \"bf16\"\ngpu_power_limit_w = 300.0"),
               {"case 'one'", "gpu_power_limit_w", "gpu_note"});
  expect_error(
      edit("precision = \"bf16\"",
           "precision = \"bf16\"\ngpu_note = \"x\"\ngpu_power_limit_w = 500.0"),
      {"gpu_power_limit_w", "must be in [100, 400] W (a quarter of its TDP to its TDP), is 500"});
  expect_error(edit("precision = \"bf16\"",
                    "precision = \"bf16\"\ngpu_note = \"x\"\ngpu_power_limit_w = 50.0"),
               {"gpu_power_limit_w", "is 50"});
}

TEST(MeasurementFile, GpuMustBeACatalogName) {
  expect_error(edit("gpu = \"a100-80gb-sxm\"", "gpu = \"a100x\""),
               {"case 'one'", "gpu: unknown GPU 'a100x'"});
  expect_error(edit("gpu = \"a100-80gb-sxm\"", "gpu = \"a100\""), {"gpu", "alias"});
  expect_error(edit("gpu = \"a100-80gb-sxm\"", "gpu = \"v100-32gb\""), {"precision", "bf16"});
}

TEST(MeasurementFile, ModelMustResolveOrBeComplete) {
  expect_error(edit("d_ffn = 256\n", ""), {"case 'one' [arch]", "d_ffn: missing"});
  expect_error(edit("n_heads = 4", "n_heads = 3"), {"[arch]", "n_heads"});
  expect_error(edit("gpus_per_node = 8", "gpus_per_node = 8\nmodel = \"pythia-160m\""),
               {"model", "exactly one"});
  expect_error(edit("[cases.arch]\nname = \"tiny\"\nfamily = \"gpt_neox\"\nn_layers = 2\n"
                    "d_model = 64\nn_heads = 4\nd_ffn = 256\nvocab_size = 1000\nseq_len = 128\n",
                    "model = \"pythia-9b\"\n"),
               {"model", "unknown model 'pythia-9b'"});
}

TEST(MeasurementFile, ConsistencyChecks) {
  expect_error(edit("tokens_per_s_per_gpu = 1000.0", "tokens_per_s_per_gpu = 1000.1"),
               {"case 'one' [derived]", "tokens_per_s_per_gpu", "give 1000"});
  expect_error(edit("global_batch_size = 64", "global_batch_size = 60"), {"global_batch_size"});
  // Neither a throughput nor a peak memory (hfu is neither): one line naming both kinds of key.
  expect_error(edit("tokens_per_s = 8000.0", "hfu = 0.5"),
               {"case 'one' [published]",
                "no throughput and no peak memory",
                "tokens_per_s_per_gpu",
                "train_time_days",
                "peak_memory_gib",
                "peak_memory_gb"});
  // A memory-only case has nothing to derive a throughput from.
  expect_error(edit("tokens_per_s = 8000.0", "peak_memory_gb = 10.0"),
               {"case 'one' [derived]", "tokens_per_s_per_gpu", "memory-only"});
  expect_error(edit("split = \"fit\"", "split = \"fit\"\ntrusted = false"), {"split", "excluded"});
  expect_error(edit("id = \"meas\"", "id = \"other\""), {"[source]", "id"});
  expect_error(edit("precision = \"bf16\"", "precision = \"fp8\""), {"precision"});
  expect_error(edit("tokens_per_s = 8000.0", "train_time_days = 2.0"), {"train_steps"});
}

// A peak memory per GPU without a throughput is a memory-only case: it loads, and validate checks
// its memory alone (docs/catalog.md).
TEST(MeasurementFile, MemoryOnlyCaseLoads) {
  const std::string no_derived =
      std::string(kValid).substr(0, std::string(kValid).find("[cases.derived]"));
  auto memory_only = [&](const std::string& peak) {
    std::string text = no_derived;
    text.replace(text.find("tokens_per_s = 8000.0"), 21, peak);
    return load_measurement_file(test::write_temp_file("meas.toml", text), test::catalog());
  };
  const MeasurementFile gib = memory_only("peak_memory_gib = 10.0");
  ASSERT_EQ(gib.cases.size(), 1U);
  const PublishedFigures& p = gib.cases[0].published;
  EXPECT_FALSE(p.has_throughput());
  EXPECT_DOUBLE_EQ(*p.peak_memory_gib, 10.0);
  EXPECT_FALSE(gib.cases[0].derived_tokens_per_s_per_gpu.has_value());
  const MeasurementFile gb = memory_only("peak_memory_gb = 10.0\napproximate = true");
  EXPECT_FALSE(gb.cases[0].published.has_throughput());
  EXPECT_DOUBLE_EQ(*gb.cases[0].published.peak_memory_gb, 10.0);
  EXPECT_TRUE(gb.cases[0].published.approximate);
  // A throughput beside the peak: an ordinary case.
  const MeasurementFile both = memory_only("tokens_per_s = 8000.0\npeak_memory_gib = 10.0");
  EXPECT_TRUE(both.cases[0].published.has_throughput());
}

// TFLOP/s by the source's own count: with its FLOPs per token they imply tokens, which a derived
// figure must match; the count alone, without the TFLOP/s, is refused, and so is a count that
// cannot be per token for this model (one per sequence).
TEST(MeasurementFile, TflopsWithTheSourcesOwnCountImplyTokens) {
  const double six_n = 6.0 * static_cast<double>(count_params(first_case(kValid).model).total);
  const auto own_count = [&](double flops_per_token, double derived) {
    return edit(edit("tokens_per_s = 8000.0",
                     fmt::format("tflops_per_gpu = 1.0\nflops_per_token = {}", flops_per_token)),
                "tokens_per_s_per_gpu = 1000.0",
                fmt::format("tokens_per_s_per_gpu = {}", derived));
  };
  // A count 1.25 times 6N (a hardware count with recomputation, say): 1e12 / it tokens per GPU.
  const double count = 1.25 * six_n;
  const Measurement c = first_case(own_count(count, 1e12 / count));
  EXPECT_DOUBLE_EQ(*c.published.flops_per_token, count);
  EXPECT_DOUBLE_EQ(*c.derived_tokens_per_s_per_gpu, 1e12 / count);
  expect_error(own_count(count, 1.1e12 / count),
               {"[derived]", "tokens_per_s_per_gpu:", "but the published figures give"});
  expect_error(own_count(128 * six_n, 1e12 / (128 * six_n)),
               {"[published]", "flops_per_token: is 128 times 6 x the model's parameters"});
  expect_error(own_count(0.1 * six_n, 1e12 / (0.1 * six_n)),
               {"[published]", "flops_per_token: is 0.1 times 6 x the model's parameters"});
  expect_error(edit("tokens_per_s = 8000.0", "tokens_per_s = 8000.0\nflops_per_token = 1e11"),
               {"[published]", "flops_per_token: is the count behind tflops_per_gpu"});
  expect_error(edit("tokens_per_s = 8000.0", "tflops_per_gpu = 100.0\nflops_per_token = 1e20"),
               {"flops_per_token: must be in [1000, 1e+16]"});
}

// A per-layer benchmark's time (one repeated block, forward and backward) is a figure of its own:
// it needs the micro-batch the layer ran and implies no throughput of a run.
TEST(MeasurementFile, LayerTimeCaseNeedsItsMicroBatchAndDerivesNothing) {
  const std::string no_derived =
      std::string(kValid).substr(0, std::string(kValid).find("[cases.derived]"));
  const std::string layer = edit(no_derived, "tokens_per_s = 8000.0", "layer_time_ms = 9.5");
  const Measurement c = first_case(layer);
  ASSERT_TRUE(c.published.layer_time_ms.has_value());
  EXPECT_DOUBLE_EQ(*c.published.layer_time_ms, 9.5);
  EXPECT_TRUE(c.published.has_throughput());
  std::string no_micro_batch = edit(layer, "micro_batch_size = 4\n", "");
  no_micro_batch = edit(no_micro_batch, "gradient_accumulation = 2\n", "");
  expect_error(no_micro_batch, {"one", "micro_batch_size", "layer_time_ms"});
  expect_error(edit("tokens_per_s = 8000.0", "layer_time_ms = 9.5"),
               {"derived", "tokens_per_s_per_gpu", "one layer"});
  expect_error(edit(layer, "layer_time_ms = 9.5", "layer_time_ms = -1.0"), {"layer_time_ms"});
}

// A source may give its network per GPU (one NIC each, as torchtitan's "400 Gb/s RDMA per GPU"):
// per node it is that times the node's GPUs. Both forms at once are refused.
TEST(MeasurementFile, NetworkPerGpuIsTimesTheGpusPerNode) {
  const std::string per_gpu =
      edit("gpus_per_node = 8", "gpus_per_node = 8\ninter_node_gbit_per_s_per_gpu = 400.0");
  const auto file =
      load_measurement_file(test::write_temp_file("meas.toml", per_gpu), test::catalog());
  EXPECT_EQ(*file.cases[0].inter_node_gbit_per_s_per_node(), 3200.0);
  const std::string per_node =
      edit("gpus_per_node = 8", "gpus_per_node = 8\ninter_node_gbit_per_s = 400.0");
  EXPECT_EQ(*load_measurement_file(test::write_temp_file("meas.toml", per_node), test::catalog())
                 .cases[0]
                 .inter_node_gbit_per_s_per_node(),
            400.0);
  expect_error(edit("gpus_per_node = 8",
                    "gpus_per_node = 8\ninter_node_gbit_per_s = 400.0\n"
                    "inter_node_gbit_per_s_per_gpu = 400.0"),
               {"case 'one'", "inter_node_gbit_per_s_per_gpu", "not both"});
}

// A case of a trusted source whose figure cannot be checked (say, its network is not published)
// says why, and is untrusted: in no MAPE, fit or error band.
TEST(MeasurementFile, UntrustedReasonMakesOneCaseUntrusted) {
  const std::string text =
      edit("gpus_per_node = 8", "gpus_per_node = 8\nuntrusted_reason = \"network not published\"");
  const auto file =
      load_measurement_file(test::write_temp_file("meas.toml", text), test::catalog());
  EXPECT_TRUE(file.source.trusted);
  EXPECT_FALSE(file.cases[0].trusted);
  EXPECT_EQ(file.cases[0].untrusted_reason, "network not published");
  const auto valid =
      load_measurement_file(test::write_temp_file("meas.toml", kValid), test::catalog());
  EXPECT_TRUE(valid.cases[0].trusted);
}

TEST(MeasurementFile, SyntaxErrorHasALine) {
  expect_error("[source]\nid = \n", {"meas.toml:2"});
}

}  // namespace
}  // namespace gpudays
