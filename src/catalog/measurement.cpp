// Measurement files: parsing, validation against the catalog, and the derived-throughput check.
#include "catalog/measurement.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "catalog/arch_fields.h"
#include "catalog/catalog.h"
#include "catalog/gpu_loader.h"
#include "catalog/model_loader.h"
#include "catalog/param_count.h"
#include "catalog/toml_document.h"
#include "catalog/toml_fields.h"
#include "common/checked_math.h"
#include "common/error.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

const std::vector<std::string> kShardings = {"none",
                                             "zero_1",
                                             "zero_2",
                                             "zero_3",
                                             "fsdp_shard_grad_op",
                                             "fsdp_full_shard",
                                             "fsdp_hybrid_shard"};
const std::vector<std::string> kCheckpointing = {
    "none", "full", "selective", "selective_op", "selective_layer"};
const std::vector<std::string> kOptimizers = {"adam", "adamw", "lamb", "sgd"};
const std::vector<std::string> kSplits = {"fit", "check", "excluded"};
// The model code behind a case (plan/workload.h's ModelCode, by name).
const std::vector<std::string> kImplementations = {
    "engine", "huggingface", "flash_attn", "llama_reference", "llm_c", "mamba_ssm"};
// The fused attention's kernel (plan/workload.h's AttentionKernel, by name).
const std::vector<std::string> kAttentionKernels = {
    "flash_attention_1", "flash_attention_2", "cudnn"};
const std::vector<std::string> kPeakMemoryMeasures = {"process", "reserved", "allocated"};
const std::vector<std::string> kFp16Optimizers = {"torch", "megatron_2020", "deepspeed_zero1_2020"};
const std::vector<std::string> kImageInputs = {"synthetic", "packed", "jpeg", "jpeg-deit"};
// The plausible ranges of published figures. Times: one microsecond (no training step is
// shorter) to 10^6 s (11.6 days) per step. Throughput: a GPU's peak is at most 10^5 TFLOP/s (the
// GPU files' bound) and a token of even a 10^6-parameter model costs 6 x 10^6 FLOPs, so at most
// 10^10 tokens/s per GPU; a cluster has at most 4096 x 64 GPUs (10^16 tokens/s). Samples: from one
// per 10^6 s to 10^12/s. Memory: at most the 1 TiB of a GPU file. A run: 86 s to 274 years.
struct PlausibleRange {
  double low;
  double high;
  const char* unit;
};
constexpr PlausibleRange kStepSeconds{1e-6, 1e6, " s"};
constexpr PlausibleRange kMilliseconds{1e-3, 1e9, " ms"};
constexpr PlausibleRange kTokensPerSecondPerGpu{1e-3, 1e10, " tokens/s"};
constexpr PlausibleRange kTokensPerSecond{1e-3, 1e16, " tokens/s"};
constexpr PlausibleRange kSamplesPerSecond{1e-6, 1e12, " samples/s"};
constexpr PlausibleRange kTflopsPerGpu{1e-3, 1e5, " TFLOP/s"};
constexpr PlausibleRange kFlopsPerToken{1e3, 1e16, " FLOPs per token"};
constexpr PlausibleRange kTrainDays{1e-3, 1e5, " days"};
constexpr PlausibleRange kMemoryGib{1e-3, 1024.0, " GiB"};
constexpr PlausibleRange kMemoryGb{1e-3, 1099.5, " GB"};
constexpr PlausibleRange kHostMemoryGib{1e-3, 1e6, " GiB"};
constexpr PlausibleRange kMemoryGbPerS{1e-3, 1e6, " GB/s"};
// The planner's network bounds (search_space.h: 0.01 to 10^4 GB/s) in Gbit/s.
constexpr PlausibleRange kNetworkGbitPerS{0.08, 8e4, " Gbit/s"};
constexpr PlausibleRange kContextMib{1.0, 65536.0, " MiB"};

// A stored derived throughput must match what the loader recomputes from the published figures.
constexpr double kDerivedTolerance = 1e-5;

std::optional<double> optional_number(const TomlFields& t, const char* key) {
  if (!t.has(key)) return std::nullopt;
  const double v = t.get_double(key);
  if (!std::isfinite(v)) t.fail(key, "must be a finite number");
  return v;
}

// A figure within its plausible range: a published number past it is a typo or a unit mistake,
// and the planner's error against it would be a number of hundreds of digits (1e300 ms).
std::optional<double> optional_within(const TomlFields& t,
                                      const char* key,
                                      const PlausibleRange& range) {
  auto v = optional_number(t, key);
  if (v && (*v < range.low || *v > range.high)) {
    t.fail(key,
           fmt::format("must be in [{:g}, {:g}]{}, is {}", range.low, range.high, range.unit, *v));
  }
  return v;
}

std::optional<double> optional_fraction(const TomlFields& t, const char* key, double top) {
  auto v = optional_number(t, key);
  if (v && (*v <= 0.0 || *v > top)) t.fail(key, fmt::format("must be in (0, {}], is {}", top, *v));
  return v;
}

std::optional<int64_t> optional_count(const TomlFields& t, const char* key) {
  if (!t.has(key)) return std::nullopt;
  const int64_t v = t.get_int(key);
  if (v <= 0) t.fail(key, fmt::format("must be a positive integer, is {}", v));
  return v;
}

std::string one_of(const TomlFields& t, const char* key, const std::vector<std::string>& choices) {
  const std::string v = t.get_string_or(key, "");
  if (!v.empty() && std::find(choices.begin(), choices.end(), v) == choices.end()) {
    t.fail(key, fmt::format("'{}' is not one of {}", v, join_choices(choices)));
  }
  return v;
}

void exclusive(const TomlFields& t, const char* a, const char* b) {
  if (t.has(a) && t.has(b)) t.fail(b, fmt::format("give either {} or {}, not both", a, b));
}

MeasurementSource read_source(const TomlFields& t, const std::string& path) {
  MeasurementSource s;
  s.path = path;
  s.id = t.get_string("id");
  if (s.id != fs::path(path).stem().string()) {
    t.fail("id",
           fmt::format("'{}' must equal the file name '{}'", s.id, fs::path(path).stem().string()));
  }
  s.title = t.get_string("title");
  s.citation = t.get_string("citation");
  s.notes = t.get_string_or("notes", "");
  s.trusted = t.get_bool_or("trusted", true);
  const std::string split = one_of(t, "split", kSplits);
  if (split.empty()) t.fail("split", "missing (fit, check or excluded)");
  s.split = split == "fit"     ? MeasurementSplit::kFit
            : split == "check" ? MeasurementSplit::kCheck
                               : MeasurementSplit::kExcluded;
  if (!s.trusted && s.split != MeasurementSplit::kExcluded) {
    t.fail("split", "an untrusted source (trusted = false) must be split = \"excluded\"");
  }
  if (s.trusted && s.split == MeasurementSplit::kExcluded) {
    t.fail("split", "\"excluded\" is for untrusted sources (trusted = false)");
  }
  t.check_all_used();
  return s;
}

// GPT-style extras: grouped-query attention, gated MLPs and learned position tables.
void read_gpt_neox_extras(const TomlFields& t, ArchSpec& a, ArchExtras& extras) {
  a.rotary_pct = 1.0;  // irrelevant to FLOPs and memory; learned tables are in extras
  extras.n_kv_heads = t.get_int_or("n_kv_heads", a.n_heads);
  extras.gated_ffn = t.get_bool_or("gated_ffn", false);
  extras.learned_position_embeddings = t.get_bool_or("learned_position_embeddings", false);
  // GPT-2 and GPT-3 (learned position tables) add each branch to the residual in turn; GPT-NeoX
  // and Pythia (rotary) run attention and MLP on the same input (their config.json's
  // use_parallel_residual). A case may state it either way.
  a.use_parallel_residual =
      t.get_bool_or("use_parallel_residual", !extras.learned_position_embeddings);
  if (extras.n_kv_heads <= 0 || a.n_heads % extras.n_kv_heads != 0) {
    t.fail("n_kv_heads",
           fmt::format("{} does not divide n_heads {}", extras.n_kv_heads, a.n_heads));
  }
  a.n_kv_heads = extras.n_kv_heads == a.n_heads ? 0 : extras.n_kv_heads;
  a.gated_ffn = extras.gated_ffn;
  a.learned_position_embeddings = extras.learned_position_embeddings;
}

void read_masked_lm_extras(const TomlFields& t, const ArchSpec& a, ArchExtras& extras) {
  extras.mlm_max_predictions = t.get_int_or("mlm_max_predictions", 0);
  if (extras.mlm_max_predictions < 0 || extras.mlm_max_predictions > a.seq_len) {
    t.fail(
        "mlm_max_predictions",
        fmt::format("must be in [0, seq_len = {}], is {}", a.seq_len, extras.mlm_max_predictions));
  }
}

// The measured keys of the family's map (family_traits.cpp); the other fields take their model
// TOML defaults, and the sequence length or position table follows from the rest.
void read_inline_arch(const TomlFields& t, ModelSpec& m, ArchExtras& extras) {
  ArchSpec& a = m.arch;
  const FamilyTraits& family = family_traits(m.family);
  for (const ArchKey& key : family.keys) {
    if (key.measured) {
      read_arch_field(t, key.toml, key.toml_default, key.member, a);
    } else {
      apply_default(key.member, key.toml_default, a);
    }
  }
  if (family.seq_len_rule == SeqLenRule::kPatches) a.seq_len = patch_seq_len(a);
  if (family.seq_len_rule == SeqLenRule::kPositionsLessPadding) {
    a.max_position_embeddings = a.seq_len + a.pad_token_id + 1;
  }
  extras.dropout = t.get_double_or("dropout", 0.0);
  if (!(extras.dropout >= 0.0 && extras.dropout < 1.0)) {
    t.fail("dropout", fmt::format("must be in [0, 1), is {}", extras.dropout));
  }
  if (m.family == Family::kGptNeox) read_gpt_neox_extras(t, a, extras);
  if (family.objective == Objective::kMaskedLm) read_masked_lm_extras(t, a, extras);
}

// Placeholder recipe for an inline model: validate_model needs one; the case's own fields are
// the configuration that was measured.
RecipeSpec placeholder_recipe(const Measurement& c) {
  RecipeSpec r;
  r.global_batch = c.global_batch_size.value_or(
      c.micro_batch_size.value_or(1) * c.gradient_accumulation.value_or(1) * c.data_parallel());
  r.train_steps = c.train_steps.value_or(1);
  r.precision = c.precision;
  r.lr = 1e-4;
  r.mlm_probability = family_traits(c.model.family).objective == Objective::kMaskedLm ? 0.15 : 0.0;
  r.dropout = c.arch_extras.dropout;
  return r;
}

void read_model(const TomlFields& t, const Catalog& catalog, Measurement& c) {
  const auto arch = t.table_or_none("arch");
  if (t.has("model") == arch.has_value()) {
    t.fail("model", "give exactly one of model = \"<catalog name>\" and an inline [arch] table");
  }
  if (!arch) {
    c.model_name = t.get_string("model");
    try {
      c.model = catalog.model(c.model_name);
    } catch (const InputError& e) {
      t.fail("model", e.what());
    }
    c.model_from_catalog = true;
    return;
  }
  c.model_name = arch->get_string("name");
  c.model.name = c.model_name;
  try {
    c.model.family = parse_family(arch->get_string("family"));
  } catch (const InputError& e) {
    arch->fail("family", e.what());
  }
  c.model.source_path = t.context();
  read_inline_arch(*arch, c.model, c.arch_extras);
  arch->get_string_or("source", "");
  arch->check_all_used();
}

PublishedFigures read_published(const TomlFields& t) {
  PublishedFigures p;
  exclusive(t, "step_time_s", "step_time_ms");
  exclusive(t, "mfu", "mfu_percent");
  exclusive(t, "peak_memory_gib", "peak_memory_gb");
  p.tokens_per_s_per_gpu = optional_within(t, "tokens_per_s_per_gpu", kTokensPerSecondPerGpu);
  p.tokens_per_s = optional_within(t, "tokens_per_s", kTokensPerSecond);
  p.samples_per_s = optional_within(t, "samples_per_s", kSamplesPerSecond);
  p.step_time_s = optional_within(t, "step_time_s", kStepSeconds);
  p.step_time_ms = optional_within(t, "step_time_ms", kMilliseconds);
  p.layer_time_ms = optional_within(t, "layer_time_ms", kMilliseconds);
  p.tflops_per_gpu = optional_within(t, "tflops_per_gpu", kTflopsPerGpu);
  p.flops_per_token = optional_within(t, "flops_per_token", kFlopsPerToken);
  if (p.flops_per_token && !p.tflops_per_gpu) {
    t.fail("flops_per_token", "is the count behind tflops_per_gpu, which is not given");
  }
  p.mfu = optional_fraction(t, "mfu", 1.0);
  p.mfu_percent = optional_fraction(t, "mfu_percent", 100.0);
  p.hfu = optional_fraction(t, "hfu", 1.0);
  p.peak_memory_gib = optional_within(t, "peak_memory_gib", kMemoryGib);
  p.peak_memory_gb = optional_within(t, "peak_memory_gb", kMemoryGb);
  if (t.has("peak_memory_measure")) {
    if (!p.peak_memory_gib && !p.peak_memory_gb) {
      t.fail("peak_memory_measure", "needs a peak (peak_memory_gib or peak_memory_gb)");
    }
    p.peak_memory_measure = one_of(t, "peak_memory_measure", kPeakMemoryMeasures);
    if (p.peak_memory_measure.empty()) {
      t.fail("peak_memory_measure", "is empty: give process, reserved or allocated");
    }
  }
  p.train_time_days = optional_within(t, "train_time_days", kTrainDays);
  p.approximate = t.get_bool_or("approximate", false);
  // A peak memory alone makes a memory-only case: validate checks its memory, not its time.
  if (!p.has_throughput() && !p.peak_memory_gib && !p.peak_memory_gb) {
    t.fail("tokens_per_s_per_gpu",
           "no throughput and no peak memory given: give a throughput (tokens_per_s_per_gpu, "
           "tokens_per_s, samples_per_s, step_time_s, step_time_ms, layer_time_ms, tflops_per_gpu, "
           "mfu, mfu_percent or train_time_days) or a peak memory per GPU (peak_memory_gib or "
           "peak_memory_gb)");
  }
  t.check_all_used();
  return p;
}

// The 2020-era fp16 optimizers hold a half-precision model in fp16 with an fp32 master copy on
// the GPU, DeepSpeed's at ZeRO stage 1, Megatron-LM's without sharding.
void check_fp16_optimizer(const Measurement& c, const TomlFields& t) {
  if (c.fp16_optimizer.empty() || c.fp16_optimizer == "torch") return;
  if (c.precision != Precision::kFp16 || !c.half_precision_model) {
    t.fail("fp16_optimizer", "needs precision = \"fp16\" and half_precision_model = true");
  }
  const char* sharding = c.fp16_optimizer == "deepspeed_zero1_2020" ? "zero_1" : "none";
  if (c.sharding != sharding || c.offloading) {
    t.fail(
        "fp16_optimizer",
        fmt::format("{} needs sharding = \"{}\" without offloading", c.fp16_optimizer, sharding));
  }
}

void read_configuration(const TomlFields& t, const Catalog& catalog, Measurement& c) {
  c.gpu = t.get_string("gpu");
  const GpuSpec* gpu = nullptr;
  try {
    gpu = &catalog.gpu(c.gpu);
  } catch (const InputError& e) {
    t.fail("gpu", e.what());
  }
  if (gpu->name != c.gpu) {
    t.fail("gpu", fmt::format("'{}' is an alias; use the catalog name '{}'", c.gpu, gpu->name));
  }
  c.gpu_note = t.get_string_or("gpu_note", "");
  c.gpu_memory_gib = optional_within(t, "gpu_memory_gib", kMemoryGib);
  c.gpu_memory_bandwidth_gb_per_s =
      optional_within(t, "gpu_memory_bandwidth_gb_per_s", kMemoryGbPerS);
  if ((c.gpu_memory_gib || c.gpu_memory_bandwidth_gb_per_s) && c.gpu_note.empty()) {
    t.fail(c.gpu_memory_gib ? "gpu_memory_gib" : "gpu_memory_bandwidth_gb_per_s",
           "needs a gpu_note saying how the measured GPU differs from the catalog's");
  }
  c.gpu_power_limit_w = optional_within(t,
                                        "gpu_power_limit_w",
                                        {gpu->tdp_w * GpuSpec::kLowestPowerLimitFraction,
                                         gpu->tdp_w,
                                         " W (a quarter of its TDP to its TDP)"});
  if (c.gpu_power_limit_w && c.gpu_note.empty()) {
    t.fail("gpu_power_limit_w",
           "needs a gpu_note saying how the measured GPU differs from the catalog's");
  }
  c.nodes = optional_count(t, "nodes").value_or(1);
  if (!t.has("gpus_per_node")) t.fail("gpus_per_node", "missing (an integer)");
  c.gpus_per_node = *optional_count(t, "gpus_per_node");
  c.inter_node_gbit_per_s = optional_within(t, "inter_node_gbit_per_s", kNetworkGbitPerS);
  c.inter_node_gbit_per_s_per_gpu =
      optional_within(t, "inter_node_gbit_per_s_per_gpu", kNetworkGbitPerS);
  if (c.inter_node_gbit_per_s && c.inter_node_gbit_per_s_per_gpu) {
    t.fail("inter_node_gbit_per_s_per_gpu", "give the network per node or per GPU, not both");
  }
  c.links = read_link_settings(t);
  try {
    c.precision = parse_precision(t.get_string("precision"));
  } catch (const InputError& e) {
    t.fail("precision", e.what());
  }
  if (c.precision == Precision::kBf16 && gpu->peak_bf16_tflops <= 0.0) {
    t.fail("precision", fmt::format("bf16 needs Ampere or newer; {} has none", gpu->name));
  }
  c.tf32 = t.get_bool_or("tf32", false);
  if (c.tf32 && (c.precision != Precision::kFp32 || gpu->peak_tf32_tflops <= 0.0)) {
    t.fail("tf32", "needs precision = \"fp32\" on a GPU with TF32");
  }
  c.sharding = one_of(t, "sharding", kShardings);
  c.activation_checkpointing = one_of(t, "activation_checkpointing", kCheckpointing);
  c.offloading = t.get_bool_or("offloading", false);
  if (c.offloading && c.sharding.rfind("zero_", 0) != 0) {
    t.fail("offloading", "needs a sharding stage (zero_1, zero_2 or zero_3)");
  }
  c.host_memory_gib = optional_within(t, "host_memory_gib", kHostMemoryGib);
  if (c.host_memory_gib && !c.offloading) t.fail("host_memory_gib", "needs offloading = true");
  c.checkpointed_block_share = optional_fraction(t, "checkpointed_block_share", 1.0);
  if (c.checkpointed_block_share && c.activation_checkpointing != "selective" &&
      c.activation_checkpointing != "selective_layer") {
    t.fail("checkpointed_block_share",
           "needs activation_checkpointing = \"selective\" or \"selective_layer\"");
  }
  c.optimizer = one_of(t, "optimizer", kOptimizers);
  c.micro_batch_size = optional_count(t, "micro_batch_size");
  c.gradient_accumulation = optional_count(t, "gradient_accumulation");
  c.global_batch_size = optional_count(t, "global_batch_size");
  c.train_steps = optional_count(t, "train_steps");
  c.fused_attention = t.get_optional_bool("fused_attention");
  c.attention_kernel = one_of(t, "attention_kernel", kAttentionKernels);
  if (!c.attention_kernel.empty() && c.fused_attention != true) {
    t.fail("attention_kernel", "needs fused_attention = true");
  }
  c.compiled = t.get_optional_bool("compiled");
  c.implementation = one_of(t, "implementation", kImplementations);
  c.autocast_fp32_weights = t.get_bool_or("autocast_fp32_weights", false);
  if (c.autocast_fp32_weights && c.precision == Precision::kFp32) {
    t.fail("autocast_fp32_weights", "needs a mixed precision (fp16 or bf16)");
  }
  c.gradients_freed = t.get_bool_or("gradients_freed", false);
  if (c.gradients_freed && c.implementation.empty()) {
    t.fail("gradients_freed",
           "describes another stack's loop: the engine's is planned from its configuration "
           "(name the code with implementation)");
  }
  if (c.gradients_freed && c.sharding.rfind("zero_", 0) == 0) {
    t.fail("gradients_freed", "DeepSpeed's ZeRO keeps its gradient buffers between steps");
  }
  c.half_precision_model = t.get_bool_or("half_precision_model", false);
  if (c.half_precision_model && c.precision == Precision::kFp32) {
    t.fail("half_precision_model", "needs a mixed precision (fp16 or bf16)");
  }
  if (c.half_precision_model && c.autocast_fp32_weights) {
    t.fail("half_precision_model",
           "a half-precision model has no autocast fp32 weights: drop autocast_fp32_weights");
  }
  if (t.has("attention_score_kernels")) {
    const int64_t kernels = t.get_int_or("attention_score_kernels", 1);
    if (kernels < 1 || kernels > 3) {
      t.fail("attention_score_kernels", fmt::format("must be 1, 2 or 3, is {}", kernels));
    }
    if (!c.half_precision_model || c.fused_attention == true || c.compiled == true) {
      t.fail("attention_score_kernels",
             "counts an uncompiled plain attention's kernels in a half-precision model: needs "
             "half_precision_model = true and neither fused_attention nor compiled");
    }
    c.attention_score_kernels = static_cast<int>(kernels);
  }
  c.strided_heads = t.get_bool_or("strided_heads", false);
  if (c.strided_heads && (c.fused_attention == true || c.compiled == true)) {
    t.fail("strided_heads",
           "describes plain attention run eagerly: not with fused_attention or compiled");
  }
  c.fp32_residual_stream = t.get_bool_or("fp32_residual_stream", false);
  if (c.fp32_residual_stream && (c.precision == Precision::kFp32 || c.half_precision_model)) {
    t.fail("fp32_residual_stream",
           "describes autocast over fp32 parameters: needs fp16 or bf16 without "
           "half_precision_model");
  }
  c.channels_last = t.get_bool_or("channels_last", false);
  c.linear_bias_add = t.get_bool_or("linear_bias_add", false);
  if (c.linear_bias_add && c.compiled == true) {
    t.fail("linear_bias_add", "describes eager Linear calls: not with compiled");
  }
  c.returns_key_values = t.get_bool_or("returns_key_values", false);
  c.holds_output = t.get_bool_or("holds_output", false);
  c.loss_scaling = t.get_bool_or("loss_scaling", true);
  if (!c.loss_scaling && c.precision != Precision::kFp16) {
    t.fail("loss_scaling", "only fp16 scales the loss: omit it for fp32 and bf16");
  }
  c.fused_optimizer = t.get_optional_bool("fused_optimizer");
  c.fp16_optimizer = one_of(t, "fp16_optimizer", kFp16Optimizers);
  c.cpu_checkpointing = t.get_bool_or("cpu_checkpointing", false);
  if (c.cpu_checkpointing && c.activation_checkpointing != "full") {
    t.fail("cpu_checkpointing", "needs activation_checkpointing = \"full\"");
  }
  check_fp16_optimizer(c, t);
  c.cuda_context_mib = optional_within(t, "cuda_context_mib", kContextMib);
  c.image_input = one_of(t, "image_input", kImageInputs);
  c.cpu_cores_per_gpu = optional_count(t, "cpu_cores_per_gpu");
  c.tensor_parallel = optional_count(t, "tensor_parallel").value_or(1);
  c.pipeline_parallel = optional_count(t, "pipeline_parallel").value_or(1);
  if (c.gpus() % (c.tensor_parallel * c.pipeline_parallel) != 0) {
    t.fail("tensor_parallel",
           fmt::format("tensor x pipeline parallel {} does not divide {} GPUs",
                       c.tensor_parallel * c.pipeline_parallel,
                       c.gpus()));
  }
  if (c.micro_batch_size && c.gradient_accumulation && c.global_batch_size &&
      checked_product({*c.micro_batch_size, *c.gradient_accumulation, c.data_parallel()}) !=
          *c.global_batch_size) {
    t.fail("global_batch_size",
           fmt::format("{} != micro_batch_size {} x gradient_accumulation {} x {} data-parallel "
                       "GPUs",
                       *c.global_batch_size,
                       *c.micro_batch_size,
                       *c.gradient_accumulation,
                       c.data_parallel()));
  }
}

// Tokens per second per GPU implied by the published figures, where that is plain arithmetic.
std::optional<double> implied_tokens_per_s_per_gpu(const Measurement& c) {
  const PublishedFigures& p = c.published;
  const double gpus = static_cast<double>(c.gpus());
  const double seq_len = static_cast<double>(c.model.arch.seq_len);
  if (p.tokens_per_s_per_gpu) return *p.tokens_per_s_per_gpu;
  if (p.tokens_per_s) return *p.tokens_per_s / gpus;
  if (is_vision(c.model.family)) return std::nullopt;  // tokens are not what vision counts
  if (p.samples_per_s) return *p.samples_per_s * seq_len / gpus;
  const std::optional<double> step_s = p.step_time_s    ? p.step_time_s
                                       : p.step_time_ms ? std::optional(*p.step_time_ms / 1e3)
                                                        : std::nullopt;
  if (step_s && c.global_batch_size) return *c.global_batch_size * seq_len / *step_s / gpus;
  if (p.train_time_days && c.train_steps && c.global_batch_size) {
    return static_cast<double>(*c.train_steps) * *c.global_batch_size * seq_len /
           (*p.train_time_days * 86400.0 * gpus);
  }
  // In the order validate compares figures in (accuracy/validate.cpp, compare): TFLOP/s last.
  if (p.tflops_per_gpu && p.flops_per_token) return *p.tflops_per_gpu * 1e12 / *p.flops_per_token;
  return std::nullopt;
}

void read_derived(const TomlFields& t, Measurement& c) {
  c.derived_tokens_per_s_per_gpu =
      optional_within(t, "tokens_per_s_per_gpu", kTokensPerSecondPerGpu);
  if (!c.derived_tokens_per_s_per_gpu) t.fail("tokens_per_s_per_gpu", "missing (a number)");
  c.derivation = t.get_string("derivation");
  if (auto implied = implied_tokens_per_s_per_gpu(c)) {
    const double rel = std::abs(*c.derived_tokens_per_s_per_gpu - *implied) / *implied;
    if (rel > kDerivedTolerance) {
      t.fail("tokens_per_s_per_gpu",
             fmt::format("{} but the published figures give {:.6g}",
                         *c.derived_tokens_per_s_per_gpu,
                         *implied));
    }
  }
  t.check_all_used();
}

Measurement read_case(const TomlFields& t,
                      const MeasurementSource& source,
                      const Catalog& catalog) {
  Measurement c;
  c.source_id = source.id;
  c.source_path = source.path;
  c.split = source.split;
  c.trusted = source.trusted;
  c.name = t.get_name("name");
  if (c.name.empty()) t.fail("name", "must not be empty (validate names each case by it)");
  c.citation = t.get_string("citation");
  c.notes = t.get_string_or("notes", "");
  c.untrusted_reason = t.get_string_or("untrusted_reason", "");
  if (!c.untrusted_reason.empty()) c.trusted = false;
  read_configuration(t, catalog, c);
  read_model(t, catalog, c);
  if (!c.model_from_catalog) c.model.recipe = placeholder_recipe(c);
  validate_model(c.model);
  if (c.implementation == "mamba_ssm" && c.model.family != Family::kMamba) {
    t.fail("implementation", "mamba_ssm runs Mamba models only");
  }
  // The model is known from here on (read_model above).
  if (c.holds_output && (c.implementation != "huggingface" || is_vision(c.model.family))) {
    t.fail("holds_output",
           "describes a loop over the logits transformers' language models return: needs "
           "implementation = \"huggingface\" and a language model");
  }
  if (c.returns_key_values && (c.implementation != "huggingface" ||
                               family_traits(c.model.family).objective != Objective::kCausalLm)) {
    t.fail("returns_key_values",
           "describes transformers' decoders (use_cache): needs implementation = \"huggingface\" "
           "and a causal language model");
  }
  if (c.channels_last && c.model.family != Family::kConvnext) {
    t.fail("channels_last", "describes ConvNeXt's blocks: the model is not a convnext");
  }
  if (!is_vision(c.model.family)) {
    for (const char* key : {"image_input", "cpu_cores_per_gpu"})
      if (t.has(key)) t.fail(key, "only vision cases (vit, convnext) load images");
  }
  if (c.cpu_cores_per_gpu && (c.image_input.empty() || c.image_input == "synthetic")) {
    t.fail("cpu_cores_per_gpu",
           "needs image_input packed, jpeg or jpeg-deit: a synthetic input loads nothing");
  }
  const TomlFields published = t.table("published");
  c.published = read_published(published);
  if (c.published.flops_per_token) {
    // A count per token lies near 6 FLOPs per parameter (0.25x: embeddings left out or a mixture
    // of experts' active parameters; 10x: recomputation and long-sequence attention); one per
    // sequence or per step is hundreds of times that.
    const double six_n = 6.0 * static_cast<double>(count_params(c.model).total);
    const double ratio = *c.published.flops_per_token / six_n;
    if (ratio < 0.25 || ratio > 10.0) {
      published.fail("flops_per_token",
                     fmt::format("is {:.3g} times 6 x the model's parameters ({:.4g} FLOPs per "
                                 "token): a count per token lies within 0.25 to 10 times that",
                                 ratio,
                                 six_n));
    }
  }
  if (c.published.train_time_days && !c.train_steps) {
    t.fail("train_steps", "missing: train_time_days needs the number of optimizer steps");
  }
  if (c.published.layer_time_ms && !c.micro_batch_size) {
    t.fail("micro_batch_size", "missing: layer_time_ms needs the micro-batch the layer ran");
  }
  if (auto derived = t.table_or_none("derived")) {
    if (!c.published.has_throughput()) {
      derived->fail("tokens_per_s_per_gpu",
                    "a memory-only case (no published throughput) has no derived throughput");
    }
    if (c.published.layer_time_ms) {
      derived->fail(
          "tokens_per_s_per_gpu",
          "a layer_time_ms case times one layer, not a run: it has no derived throughput");
    }
    read_derived(*derived, c);
  }
  t.check_all_used();
  return c;
}

}  // namespace

std::string to_string(MeasurementSplit split) {
  switch (split) {
    case MeasurementSplit::kFit:
      return "fit";
    case MeasurementSplit::kCheck:
      return "check";
    case MeasurementSplit::kExcluded:
      return "excluded";
  }
  return "?";
}

bool PublishedFigures::has_throughput() const {
  return tokens_per_s_per_gpu || tokens_per_s || samples_per_s || step_time_s || step_time_ms ||
         layer_time_ms || tflops_per_gpu || mfu || mfu_percent || train_time_days;
}

bool Measurement::representable() const {
  return tensor_parallel == 1 && pipeline_parallel == 1;
}

MeasurementFile load_measurement_file(const std::string& path, const Catalog& catalog) {
  const auto document = parse_toml_document(path);
  const auto owner = std::static_pointer_cast<const void>(document);
  for (auto&& [key, value] : *document) {
    if (key.str() != "source" && key.str() != "cases") {
      throw InputError(fmt::format("{}: {}: unknown key (see docs/catalog.md)", path, key.str()));
    }
  }
  const toml::table* source_table = (*document)["source"].as_table();
  if (source_table == nullptr) throw InputError(fmt::format("{}: [source]: missing table", path));
  MeasurementFile file;
  file.source = read_source(TomlFields(*source_table, path + " [source]", owner), path);
  const toml::array* cases = (*document)["cases"].as_array();
  if (cases == nullptr || cases->empty() || !cases->is_array_of_tables()) {
    throw InputError(fmt::format("{}: cases: missing (one [[cases]] table per case)", path));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < cases->size(); ++i) {
    const toml::table& table = *cases->get(i)->as_table();
    const auto name = table["name"].value<std::string>();
    const std::string context =
        name ? fmt::format("{} case '{}'", path, *name) : fmt::format("{} cases[{}]", path, i);
    Measurement c = read_case(TomlFields(table, context, owner), file.source, catalog);
    if (!names.insert(c.name).second) {
      throw InputError(fmt::format("{}: name: '{}' is used twice", context, c.name));
    }
    file.cases.push_back(std::move(c));
  }
  return file;
}

std::vector<MeasurementFile> load_measurement_dir(const std::string& dir, const Catalog& catalog) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(fmt::format("measurement directory {} does not exist", dir));
  }
  const std::vector<std::string> paths = catalog_toml_files(dir);
  std::vector<MeasurementFile> files;
  for (const auto& path : paths) files.push_back(load_measurement_file(path, catalog));
  return files;
}

std::vector<MeasurementFile> load_measurements(const Catalog& catalog) {
  return load_measurement_dir((fs::path(catalog.config_dir()) / "measurements").string(), catalog);
}

}  // namespace gpudays
