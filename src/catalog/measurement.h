// Published training-throughput measurements (configs/measurements/*.toml, one file per source;
// schema in docs/catalog.md): the model, the GPUs, the configuration and the figure as published,
// each with its citation. Loading checks every key and resolves models and GPUs against the
// catalog; comparing the figures with the planner is the caller's job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"

namespace gpudays {

class Catalog;

// Which half of the validation set a source belongs to, fixed in its file. kExcluded holds
// untrusted sources, which neither fit nor check anything.
enum class MeasurementSplit { kFit, kCheck, kExcluded };
std::string to_string(MeasurementSplit split);

// The [source] table: one publication.
struct MeasurementSource {
  std::string id;        // equals the file's stem, e.g. "flashattention2-paper"
  std::string title;     // the publication's title
  std::string citation;  // authors/venue, URL, commit or date
  MeasurementSplit split = MeasurementSplit::kFit;
  bool trusted = true;  // false: known-bad numbers, kept for comparison only
  std::string notes;
  std::string path;  // the file it was read from

  bool operator==(const MeasurementSource&) const = default;
};

// Architecture the catalog's ModelSpec has no field for (inline models only). The ModelSpec of a
// case keeps the published n_heads and d_ffn; these say how the real model differs from it.
struct ArchExtras {
  int64_t n_kv_heads = 0;                    // key/value heads (grouped-query attention)
  bool gated_ffn = false;                    // SwiGLU-style MLP: three d_model x d_ffn matrices
  bool learned_position_embeddings = false;  // GPT-2 style table instead of rotary
  int64_t mlm_max_predictions = 0;  // roberta: MLM head on masked positions only, at most this
                                    // many per sample (0: on every position, as ModelSpec counts)
  double dropout = 0.0;  // hidden and attention dropout as the measured model was configured

  bool operator==(const ArchExtras&) const = default;
};

// The figures exactly as the source publishes them, each in its own unit; absent when not given.
// Rates and times are of the whole job unless the name says per GPU. The loader needs a
// throughput figure or a peak memory.
struct PublishedFigures {
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> tokens_per_s;   // all GPUs together
  std::optional<double> samples_per_s;  // all GPUs together (sequences or images)
  std::optional<double> step_time_s;    // one optimizer step
  std::optional<double> step_time_ms;
  // One repeated block (a transformer layer) alone, forward and backward, on one GPU, with the
  // host's launch latency hidden (a per-layer benchmark): no optimizer, embeddings or loss.
  std::optional<double> layer_time_ms;
  std::optional<double> tflops_per_gpu;  // model TFLOP/s per GPU, by the source's FLOP count
  // The FLOPs per token the source divides by to get tflops_per_gpu, where its count is its own
  // (hardware FLOPs with recomputation, non-causal attention): validate then compares tokens.
  std::optional<double> flops_per_token;
  std::optional<double> mfu;  // model FLOPs utilisation, a fraction
  std::optional<double> mfu_percent;
  std::optional<double> hfu;              // hardware FLOPs utilisation, a fraction
  std::optional<double> peak_memory_gib;  // per GPU, 2^30 bytes
  std::optional<double> peak_memory_gb;   // per GPU, as the source writes "GB"
  // What the peak counts: "process" (NVML, nvidia-smi: everything the process holds on the GPU,
  // the CUDA context too; the default), "reserved" (the caching allocator's peak reservation,
  // torch.cuda.max_memory_reserved: no context or NCCL buffers) or "allocated"
  // (torch.cuda.max_memory_allocated: tensors alone, no allocator slack either).
  std::string peak_memory_measure = "process";
  std::optional<double> train_time_days;  // a whole run of `train_steps` optimizer steps
  bool approximate = false;               // the source itself marks the figure "~" or "about"

  // Whether any figure validate compares as throughput is given (hfu and the peaks are not);
  // without one the case has a peak memory only and is checked for memory alone.
  bool has_throughput() const;

  bool operator==(const PublishedFigures&) const = default;
};

// One published case. Configuration strings are the source's, in the project's words; an empty
// string or an absent optional means the source does not say.
struct Measurement {
  std::string source_id;
  std::string source_path;
  MeasurementSplit split = MeasurementSplit::kFit;
  bool trusted = true;

  std::string name;        // unique within its file
  std::string citation;    // where in the source: table, row, column, section, line
  std::string model_name;  // catalog name, or the inline architecture's name
  bool model_from_catalog = false;
  ModelSpec model;  // inline: the architecture and a placeholder recipe (see docs/catalog.md)
  ArchExtras arch_extras;

  std::string gpu;       // catalog GPU name
  std::string gpu_note;  // how the measured GPU differs from the catalog's, when it does
  // The measured part's memory where the source states it and it differs from the catalog GPU's
  // (a variant of the same chip); validate plans the catalog GPU with these.
  std::optional<double> gpu_memory_gib;
  std::optional<double> gpu_memory_bandwidth_gb_per_s;
  std::optional<double> gpu_power_limit_w;  // the measured GPUs' power limit, below their TDP
  int64_t nodes = 1;
  int64_t gpus_per_node = 1;
  std::optional<double> inter_node_gbit_per_s;          // per node, as published
  std::optional<double> inter_node_gbit_per_s_per_gpu;  // per GPU (one NIC each), as published
  // The network between nodes per node, from whichever of the two the source gives.
  std::optional<double> inter_node_gbit_per_s_per_node() const {
    if (inter_node_gbit_per_s_per_gpu) {
      return *inter_node_gbit_per_s_per_gpu * static_cast<double>(gpus_per_node);
    }
    return inter_node_gbit_per_s;
  }
  // The node's links where the source says how they differ from the GPU file's defaults (an
  // NVLink bridge fitted or not, peer-to-peer off).
  LinkSettings links;

  Precision precision = Precision::kBf16;
  bool tf32 = false;     // fp32 recipes: matmuls in TF32
  std::string sharding;  // none, zero_1..3, fsdp_shard_grad_op, fsdp_full_shard, fsdp_hybrid_shard
  std::string activation_checkpointing;  // none, full, selective, selective_op, selective_layer
  // The optimizer state (and the reduced gradient shards) on the host with a CPU Adam
  // (ZeRO-Offload, DeepSpeed's offload_optimizer), and the host memory per node as published
  // (absent: the planner's default, docs/planner.md).
  bool offloading = false;
  std::optional<double> host_memory_gib;
  // selective, selective_layer: the share of the repeated blocks checkpointed, as the source
  // states or its figures imply (notes say how); absent: planned as every block.
  std::optional<double> checkpointed_block_share;
  std::optional<int64_t> micro_batch_size;       // samples per GPU per micro-step
  std::optional<int64_t> gradient_accumulation;  // micro-steps per optimizer step
  std::optional<int64_t> global_batch_size;      // samples per optimizer step, all GPUs
  std::optional<int64_t> train_steps;            // steps behind train_time_days
  std::optional<bool> fused_attention;
  // The fused attention's kernel (plan/workload.h's AttentionKernel names: flash_attention_1,
  // flash_attention_2, cudnn); empty: the model code's.
  std::string attention_kernel;
  std::optional<bool> compiled;  // torch.compile or an equivalent graph compiler
  // Whose model code ran (the planner's ModelCode names: huggingface, flash_attn,
  // llama_reference); empty: not stated, planned as the project's engine.
  std::string implementation;
  // Mixed precision by autocast over fp32 weights also at ZeRO stage 1 (e.g. Lightning's
  // DDPStrategyZero1 over torch's ZeroRedundancyOptimizer): every micro-step casts the weights.
  bool autocast_fp32_weights = false;
  // The loop set the gradients to None after each optimizer step (torch >= 2.0's zero_grad
  // default; FSDP frees its sharded gradients with it): with one micro-step per step no gradient
  // exists as the forward runs (plan/memory_model.h, stack_frees_gradients).
  bool gradients_freed = false;
  // The model in the compute dtype with an fp32 master copy in the optimizer (apex AMP O2,
  // DeepSpeed's fp16 engine): no autocast (plan/time_model.h, half_precision_model).
  bool half_precision_model = false;
  // Plain attention's elementwise kernels over the scores before the softmax in a half-precision
  // model (a scale, a mask add): each reads and writes the scores. Absent: one (the mask, with the
  // scale folded into the product, as Megatron-LM's baddbmm).
  std::optional<int> attention_score_kernels;
  // q, k and v enter plain attention's batched products as strided views of the projections (a
  // sequence-first layout and torch.bmm): no copy splits the heads.
  bool strided_heads = false;
  // Autocast with the residual stream in fp32 (plan/workload.h, Implementation).
  bool fp32_residual_stream = false;
  // ConvNeXt run channels-last, as timm runs it (plan/workload.h, Implementation).
  bool channels_last = false;
  // Linear's bias added by its own kernel (plan/workload.h, Implementation).
  bool linear_bias_add = false;
  // transformers' decoder returned every layer's keys and values (plan/workload.h, Implementation).
  bool returns_key_values = false;
  // The training loop held the model's output into the next step (plan/workload.h).
  bool holds_output = false;
  // The CUDA context and loaded kernels as the source measured them (the memory model's
  // cuda_context_bytes; absent: its default, which assumes lazy module loading).
  std::optional<double> cuda_context_mib;
  std::string optimizer;  // adam, adamw, lamb, sgd (planned as SGD with Nesterov momentum)
  // fp16 with dynamic loss scaling (GradScaler), as the engine trains it; false: fp16 autocast
  // without it (no unscaling pass before the update).
  bool loss_scaling = true;
  // The optimizer's update as one multi-tensor kernel (apex's FusedAdam and FusedLAMB, torch's
  // fused=True, llm.c's); absent: fused with free-lunch, as the engine runs it.
  std::optional<bool> fused_optimizer;
  // DeepSpeed's activation checkpointing with cpu_checkpointing: the checkpointed blocks' inputs
  // in host memory (plan/memory_model.h, checkpoint_inputs_on_host).
  bool cpu_checkpointing = false;
  // A 2020-era fp16 optimizer whose per-step work the planner's own does not have
  // (megatron_2020, deepspeed_zero1_2020: plan/fp16_optimizer.h); empty: torch's.
  std::string fp16_optimizer;
  // Vision runs: where the images came from (synthetic, packed, jpeg, jpeg-deit: the planner's
  // ImageInput names; empty: not stated, planned as synthetic) and the host's CPU cores per GPU
  // that loaded them (absent: the planner's default).
  std::string image_input;
  std::optional<int64_t> cpu_cores_per_gpu;
  int64_t tensor_parallel = 1;
  int64_t pipeline_parallel = 1;

  PublishedFigures published;
  std::optional<double> derived_tokens_per_s_per_gpu;  // exact arithmetic on published figures
  std::string derivation;                              // that arithmetic, in words
  std::string notes;
  // Why this one case cannot be checked although its source is trusted (e.g. the source does not
  // publish a network the figure depends on); non-empty makes the case untrusted.
  std::string untrusted_reason;

  int64_t gpus() const { return nodes * gpus_per_node; }
  int64_t data_parallel() const { return gpus() / (tensor_parallel * pipeline_parallel); }
  // True when the run used neither tensor nor pipeline parallelism, which the planner does not
  // model (an MLM head on masked positions only is the planner's Implementation::mlm_predictions;
  // grouped-query attention and gated MLPs are ArchSpec's n_kv_heads and gated_ffn).
  bool representable() const;
};

struct MeasurementFile {
  MeasurementSource source;
  std::vector<Measurement> cases;
};

// Reads one file; throws InputError with a one-line message naming the file, the case and the key.
MeasurementFile load_measurement_file(const std::string& path, const Catalog& catalog);
// Every *.toml in `dir`, sorted by name; source ids must be unique.
std::vector<MeasurementFile> load_measurement_dir(const std::string& dir, const Catalog& catalog);
// The catalog's own set: <config dir>/measurements.
std::vector<MeasurementFile> load_measurements(const Catalog& catalog);

}  // namespace gpudays
