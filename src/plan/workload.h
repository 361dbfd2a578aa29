// The work of one forward pass over a micro-batch, as a list of operations per family: matmuls
// with their shapes, fused attention, memory-bound operations and vector compute, each with the
// bytes it moves and the activations it saves for backward. The planner's memory, FLOPs and time
// all derive from this one description (workload_<family>.cpp builds it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"

namespace gpudays {

enum class OpClass {
  kMatmul,          // tensor-core GEMM: time bounded by the matmul ceiling and shape efficiency
  kFusedAttention,  // one fused (flash) attention kernel
  kMemory,          // bandwidth-bound elementwise / normalisation / reduction
  kVector,          // FP32 CUDA-core arithmetic (selective scan)
  kDepthwiseConv,   // depthwise convolution: memory-bound on a GPU; on the host CPU its weight
                    // gradient runs on a slow path (DeviceModelConstants)
};

// The kernel behind a fused attention (docs/planner.md, "Fused attention on Hopper"). The first
// two issue Ampere's mma.sync tensor-core instructions on every GPU; cuDNN's fused attention has
// kernels for Hopper's and Blackwell's own (warpgroup) instructions.
enum class AttentionKernel {
  kFlashAttention1,  // Dao et al. 2022 (FlashAttention): about half FlashAttention-2's speed
  kFlashAttention2,  // Dao 2023 (FlashAttention-2): the flash-attn package, and torch's SDPA
                     // "flash" backend, which SDPA picked on every GPU before torch 2.10
  kCudnn,  // cuDNN's: what torch's SDPA runs on sm90 and sm100 from torch 2.10 with cuDNN above
           // 9.15 (torch 2.11's wheels bundle 9.19); elsewhere SDPA runs FlashAttention-2
};
// "flash_attention_1", "flash_attention_2", "cudnn"; a failed look-up names the choices.
AttentionKernel parse_attention_kernel(const std::string& name);
std::vector<std::string> attention_kernel_names();
std::string to_string(AttentionKernel kernel);

struct Op {
  const char* name = "";
  OpClass cls = OpClass::kMemory;
  double model_flops = 0.0;      // forward FLOPs counted in model FLOPs (MFU)
  double exec_flops = 0.0;       // forward FLOPs executed (causal fused attention skips half)
  double bytes = 0.0;            // forward memory traffic
  double saved_bytes = 0.0;      // activations kept for backward
  double transient_bytes = 0.0;  // short-lived buffers while the op (or its backward) runs
  double kernels = 1.0;          // kernel launches (ATen calls on the host CPU) in forward
  double backward_factor = 2.0;  // backward cost relative to forward
  // A memory-bound operation's backward as its code runs it, where that is not backward_factor
  // times the forward (an add's backward launches nothing; softmax's reads the output and its
  // gradient and writes one; dropout's reads the gradient and the mask): traffic and launches.
  // Negative: backward_factor times the forward's.
  double backward_bytes = -1.0;
  double backward_kernels = -1.0;
  double backward_traffic() const {
    return backward_bytes >= 0.0 ? backward_bytes : bytes * backward_factor;
  }
  double backward_launches() const {
    return backward_kernels >= 0.0 ? backward_kernels : kernels * backward_factor;
  }
  double m = 0, n = 0, k = 0;  // matmul shape of one GEMM in the batch
  // GEMMs in a batched matmul: one kernel on a GPU (cuBLAS's strided batched GEMM), one BLAS call
  // each on the host CPU (ATen's CPU bmm: 6-11 us per call on the development machine).
  double batch = 1.0;
  // Under a per-op checkpointing policy (CheckpointPolicy::keep_alternate_matmuls): the output
  // bytes it keeps of this op, and the share of the op's forward that is not recomputed.
  double policy_kept_bytes = 0.0;
  double policy_kept_share = 0.0;
  // A fused attention op's kernel: its rate on each GPU generation is DeviceModel's.
  AttentionKernel attention_kernel = AttentionKernel::kFlashAttention2;
  // A 2-D depthwise convolution (ConvNeXt's 7x7) whose bytes are one pass over its input and
  // output: the device model charges its kernels' passes (DeviceModelConstants).
  bool depthwise_2d = false;
};

// A repeated unit (transformer layer, ConvNeXt block, Mamba block): the checkpointing granule.
struct Block {
  std::string name;
  int64_t count = 0;
  double input_bytes = 0.0;  // what a checkpointed block keeps: its input
  // What the block returns beyond its output (the keys and values of
  // Implementation::returns_key_values): alive until the model's forward returns, whatever the
  // checkpointing; without checkpointing attention keeps the same tensors.
  double returned_bytes = 0.0;
  int64_t params = 0;  // parameters of one block
  int64_t param_tensors = 0;
  std::vector<Op> ops;
};

struct Workload {
  double checkpointed_block_share = 1.0;  // CheckpointPolicy::block_share
  std::vector<Op> stem_ops;  // what is not in a repeated block and not the head: embeddings,
                             // patchify, ConvNeXt's downsampling (never checkpointed)
  std::vector<Block> blocks;
  std::vector<Op> head_ops;  // final norm, classifier / unembedding, loss
  int64_t samples = 0;
  int64_t tokens_per_sample = 0;            // 1 for convnext (images)
  int64_t param_tensors = 0;                // all parameter tensors (optimizer kernel count)
  int64_t largest_param_tensor = 0;         // ParamCounts::largest_tensor
  int64_t input_only_embedding_params = 0;  // ParamCounts::input_only_embedding
  // The forward's kernels are launched from eager Python model code (python_launches), not from
  // the engine's C++ or a compiled graph: the host's cost per kernel differs (DeviceModel).
  bool python_forward = false;
  // The logits as the model's output returns them (transformers' code: in fp32 where it upcasts),
  // which a loop that holds the output keeps (Implementation::holds_output); 0 for code that
  // returns none.
  double head_output_bytes = 0.0;
  // What the loss's forward holds as it ends beyond the head ops' saved tensors (transformers'
  // Llama: the shifted copy and, unless a held output counts them, the returned fp32 logits).
  double head_forward_extra_bytes = 0.0;
  bool holds_output = false;  // Implementation::holds_output
};

// Whose model code runs the forward pass: the same mathematics, launched as different kernels
// (docs/planner.md, "Model code and torch.compile"). Set per published measurement; `plan` always
// plans the project's engine.
enum class ModelCode {
  kEngine,       // the project's LibTorch engine: one ATen kernel per operation
  kHuggingFace,  // transformers' eager modeling code (GPT-2): gelu_new as eight pointwise
                 // kernels, attention scaled and masked by two kernels before the fp32 softmax
  kFlashAttn,    // the FlashAttention repository's GPT (training/): without flash, softmax in the
                 // compute dtype (flash_attn/modules/mha.py SelfAttention); GELU in the GEMM
                 // epilogue (FusedMLP); apex's cross-entropy with its gradient in place
  kLlamaReference,  // Meta's Llama reference code, which torchtitan and fms-fsdp follow: RMSNorm
                    // upcast to fp32 (eight kernels), rotary as an fp32 complex product
  kLlmC,  // llm.c's hand-written CUDA (train_gpt2.cu): pointwise chains fused by hand (residual +
          // LayerNorm, as a compiler would), and the fused classifier (llmc/fused_classifier.cuh):
          // softmax, loss and the logits' gradient in one pass that overwrites the logits
  kMambaSsm,  // Mamba only: the mamba-ssm package's fast path (mamba_inner_fn): the fused CUDA
              // selective scan and causal conv1d, fused add + RMSNorm with an fp32 residual, and
              // flash-attn's cross-entropy with its gradient in place, as its authors train it
};
// "engine", "huggingface", "flash_attn", "llama_reference", "llm_c", "mamba_ssm"; a failed
// look-up names the choices.
ModelCode parse_model_code(const std::string& name);
// Every ModelCode's name, in the vocabulary's order ("engine" first).
std::vector<std::string> model_code_names();
std::string to_string(ModelCode code);
struct Implementation;
// Why `code` cannot run `model` ("mamba_ssm runs Mamba models only"); empty when it can. The
// planner's vocabulary: mamba-ssm's kernels run Mamba only and Mamba runs as the engine or them;
// llm.c trains GPT-2 (learned positions); Meta's reference code is Llama's; FlashAttention's GPT
// and its kernels serve the decoder families.
std::string model_code_mismatch(ModelCode code, const ModelSpec& model);

// Whether the implementation's forward runs as eager Python (transformers', flash-attn's, Meta's
// and mamba-ssm's nn.Modules without torch.compile) rather than the engine's C++ or llm.c's CUDA.
bool python_launches(const Implementation& implementation);

// What a checkpointed run keeps (docs/planner.md, "Selective checkpointing"). The engine, and so
// `plan`, checkpoints every repeated block whole; published runs also checkpointed some blocks
// only, or kept some operations' outputs inside each block.
struct CheckpointPolicy {
  // Share of the repeated blocks checkpointed (fms-fsdp's selective_checkpointing p; torchtitan's
  // "every k-th layer" is 1/k); the others keep all their activations.
  double block_share = 1.0;
  // torchtitan's per-op policy inside a checkpointed block: in call order, the outputs of the odd
  // matmul calls (the 1st, 3rd, ...) and of the fused attention are kept; the rest is recomputed.
  bool keep_alternate_matmuls = false;
  bool operator==(const CheckpointPolicy&) const = default;
};

struct Implementation {
  ModelCode code = ModelCode::kEngine;
  // torch.compile (TorchInductor; Ansel et al. 2024, "PyTorch 2", Sec. 4.3): every chain of
  // pointwise and reduction operations between two GEMMs becomes one generated kernel that reads
  // the chain's inputs and writes its outputs once.
  bool compiled = false;
  // RoBERTa/BERT: the MLM head (dense, GELU, LayerNorm, decoder, loss) on at most this many masked
  // positions per sequence, gathered first (NVIDIA's BERT: index_select, max_predictions_per_seq);
  // 0: on every position (HuggingFace's RobertaForMaskedLM, the engine).
  int64_t mlm_predictions = 0;
  // fp32 matmuls in TF32 whatever the method set (NVIDIA's training scripts turn it on globally);
  // otherwise TF32 comes with free-lunch.
  bool tf32 = false;
  // The model itself in the compute dtype (apex AMP O2, DeepSpeed's fp16 engine), not under
  // autocast: plain attention's softmax runs and is kept in the compute dtype.
  bool half_precision_model = false;
  // The fused attention's kernel; unset: the model code's (attention_kernel below).
  std::optional<AttentionKernel> attention_kernel;
  // A half-precision model's plain attention: elementwise kernels over the scores before the
  // softmax (1: the mask; 2: a scale kernel and the mask, as NVIDIA's BERT divides the scores).
  int attention_score_kernels = 1;
  // q, k and v enter plain attention's batched products as strided views (a sequence-first layout
  // and torch.bmm): no copy splits the heads.
  bool strided_heads = false;
  // Autocast over fp32 parameters whose residual stream stays fp32 (fp32 embeddings, class token
  // or positions added first: timm's ViT and ConvNeXt, transformers' GPT-2 and BERT): norms read
  // and write fp32, the next Linear casts down, the residual adds read the half-precision branch
  // and write fp32, and backward casts each branch's gradient down.
  bool fp32_residual_stream = false;
  // ConvNeXt in channels-last memory (timm: NHWC from the stem's LayerNorm2d on): its blocks'
  // permutes are views, and under autocast its layer scale multiplies by an fp32 parameter.
  bool channels_last = false;
  // Linear's bias added by a kernel of its own after the product (F.linear on 3-D input before
  // PyTorch 1.12, on 4-D input before 2.1: matmul, then add_), not in the GEMM's epilogue.
  bool linear_bias_add = false;
  // transformers' decoders with use_cache on in training (config.use_cache, and checkpointing that
  // is not transformers' own, which turns it off): every layer returns its keys and values, alive
  // until the model's forward returns (its head included), beyond what checkpointing frees.
  bool returns_key_values = false;
  // The training loop holds the model's output (`outputs = model(**batch)`) until the next step's
  // forward returns: the returned logits and keys and values live through backward, and the
  // previous step's beside the next forward.
  bool holds_output = false;
  CheckpointPolicy checkpointing;
  bool operator==(const Implementation&) const = default;
};

// The kernel an implementation's fused attention runs: its own where set, else its model code's
// (flash_attn: FlashAttention-2; the others: torch's SDPA as torch 2.11 dispatches it, cuDNN's
// kernels on sm90 and sm100).
AttentionKernel attention_kernel(const Implementation& implementation);

struct WorkloadOptions {
  int64_t micro_batch_size = 1;
  double activation_bytes = 2.0;  // bytes per activation element: 2 mixed, 4 fp32
  bool fused_attention = false;
  bool fast_scan = false;
  Implementation implementation;
  // Where it runs: Mamba's fast scan is the fused kernel on the host CPU and the chunked ATen scan
  // on a GPU (models/selective_scan.h, scan_for_device).
  DeviceKind device_kind = DeviceKind::kGpu;
};

Workload build_workload(const ModelSpec& model, const WorkloadOptions& options);

// The options the planner builds a configuration's workload with: a micro-batch, the recipe's
// activation bytes (4 in fp32, else 2), free-lunch's fused attention and fast scan, on `kind`.
WorkloadOptions planned_workload_options(const ModelSpec& model,
                                         int64_t micro_batch,
                                         bool free_lunch,
                                         const Implementation& implementation,
                                         DeviceKind kind);

// A training step's FLOPs per forward FLOP: the backward pass costs two forwards (gradients of
// the inputs and of the weights), as Kaplan et al. 2020 and PaLM count them.
inline constexpr double kTrainingFlopsPerForwardFlop = 3.0;

// Forward model FLOPs of one sample (matmuls, attention, convolutions, scan).
double forward_flops_per_sample(const ModelSpec& model);
// Training model FLOPs of one sample, forward and backward (2x forward), as the planner counts
// them: MFU's numerator.
double training_flops_per_sample(const ModelSpec& model);

// Builders shared by the family files.
Op make_matmul(const char* name, double m, double n, double k, double elt, double batch = 1.0);
Op make_memory(
    const char* name, double elements_moved, double elt, double saved_bytes, double kernels = 1.0);
// `op` with its backward as its code runs it: `bytes` of traffic in `kernels` launches
// (Op::backward_bytes, backward_kernels).
Op with_backward(Op op, double bytes, double kernels);
// Cross-entropy over rows x classes logits: upcast to fp32, log-softmax, NLL; keeps the logits
// and the fp32 log-probabilities for backward.
Op make_cross_entropy(double rows, double classes, double elt);
// A fused cross-entropy that keeps only the logits and writes their gradient over them (apex's
// and flash-attn's xentropy with inplace_backward): one pass forward, a read and a write back.
Op make_inplace_cross_entropy(double rows, double classes, double elt);
// transformers' Llama head of 4.31 to 4.45: the logits upcast to fp32 and returned by the model.
Op make_upcast_cross_entropy(double rows, double classes, double elt);
double sum_model_flops(const std::vector<Op>& ops);

Workload build_transformer_workload(const ModelSpec& model, const WorkloadOptions& options);
Workload build_convnext_workload(const ModelSpec& model, const WorkloadOptions& options);
Workload build_mamba_workload(const ModelSpec& model, const WorkloadOptions& options);

}  // namespace gpudays
