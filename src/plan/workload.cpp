// Workload dispatch, op builders and FLOP totals.
#include "plan/workload.h"

#include "catalog/param_count.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

constexpr std::array<std::pair<ModelCode, const char*>, 6> kModelCodes = {{
    {ModelCode::kEngine, "engine"},
    {ModelCode::kHuggingFace, "huggingface"},
    {ModelCode::kFlashAttn, "flash_attn"},
    {ModelCode::kLlamaReference, "llama_reference"},
    {ModelCode::kLlmC, "llm_c"},
    {ModelCode::kMambaSsm, "mamba_ssm"},
}};

constexpr std::array<std::pair<AttentionKernel, const char*>, 3> kAttentionKernels = {{
    {AttentionKernel::kFlashAttention1, "flash_attention_1"},
    {AttentionKernel::kFlashAttention2, "flash_attention_2"},
    {AttentionKernel::kCudnn, "cudnn"},
}};

// A name table's names, in order; the value of a name (what: "implementation" in the error); the
// name of a value (the first entry's for a value not in the table).
template <typename E, size_t N>
std::vector<std::string> names_of(const std::array<std::pair<E, const char*>, N>& table) {
  std::vector<std::string> names;
  for (const auto& [value, name] : table) names.push_back(name);
  return names;
}

template <typename E, size_t N>
E value_of(const std::array<std::pair<E, const char*>, N>& table,
           const std::string& name,
           const char* what) {
  for (const auto& [value, n] : table) {
    if (name == n) return value;
  }
  throw InputError(
      fmt::format("unknown {} '{}'; valid: {}", what, name, join_choices(names_of(table))));
}

template <typename E, size_t N>
std::string name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return table.front().second;
}

}  // namespace

std::vector<std::string> attention_kernel_names() {
  return names_of(kAttentionKernels);
}

AttentionKernel parse_attention_kernel(const std::string& name) {
  return value_of(kAttentionKernels, name, "attention kernel");
}

std::string to_string(AttentionKernel kernel) {
  return name_of(kAttentionKernels, kernel);
}

AttentionKernel attention_kernel(const Implementation& implementation) {
  if (implementation.attention_kernel) return *implementation.attention_kernel;
  return implementation.code == ModelCode::kFlashAttn ? AttentionKernel::kFlashAttention2
                                                      : AttentionKernel::kCudnn;
}

std::vector<std::string> model_code_names() {
  return names_of(kModelCodes);
}

ModelCode parse_model_code(const std::string& name) {
  return value_of(kModelCodes, name, "implementation");
}

std::string to_string(ModelCode code) {
  return name_of(kModelCodes, code);
}

std::string model_code_mismatch(ModelCode code, const ModelSpec& model) {
  const Family family = model.family;
  const bool decoder = family == Family::kGptNeox || family == Family::kLlama;
  switch (code) {
    case ModelCode::kEngine:
      return "";
    case ModelCode::kMambaSsm:
      return family == Family::kMamba ? "" : "mamba_ssm runs Mamba models only";
    case ModelCode::kHuggingFace:
      break;
    case ModelCode::kLlmC:
      if (family != Family::kGptNeox || !model.arch.learned_position_embeddings)
        return "llm_c trains GPT-2 only (a gpt_neox model with learned position embeddings)";
      return "";
    case ModelCode::kLlamaReference:
      return family == Family::kLlama ? "" : "llama_reference runs Llama-family models only";
    case ModelCode::kFlashAttn:
      return decoder ? "" : "flash_attn runs the decoder families (gpt_neox, llama) only";
  }
  return family == Family::kMamba ? "a Mamba model runs as the engine's code or mamba_ssm's" : "";
}

bool python_launches(const Implementation& implementation) {
  if (implementation.compiled) return false;  // Inductor's wrapper launches the kernels
  switch (implementation.code) {
    case ModelCode::kEngine:
    case ModelCode::kLlmC:
      return false;
    case ModelCode::kHuggingFace:
    case ModelCode::kFlashAttn:
    case ModelCode::kLlamaReference:
    case ModelCode::kMambaSsm:
      return true;
  }
  return false;
}

Op make_matmul(const char* name, double m, double n, double k, double elt, double batch) {
  Op op;
  op.name = name;
  op.cls = OpClass::kMatmul;
  op.model_flops = 2.0 * m * n * k * batch;
  op.exec_flops = op.model_flops;
  op.bytes = (m * k + k * n + m * n) * elt * batch;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = batch;
  return op;
}

Op make_memory(
    const char* name, double elements_moved, double elt, double saved_bytes, double kernels) {
  Op op;
  op.name = name;
  op.cls = OpClass::kMemory;
  op.bytes = elements_moved * elt;
  op.saved_bytes = saved_bytes;
  op.kernels = kernels;
  return op;
}

Op with_backward(Op op, double bytes, double kernels) {
  op.backward_bytes = bytes;
  op.backward_kernels = kernels;
  return op;
}

// The loss over log-probabilities (log_softmax keeps its output for backward). In fp32 the logits
// are freed once log_softmax has run, and backward holds the gradients of the log-probabilities
// and of the logits: three logit-sized tensors at the head's peak (measured on the CPU,
// CheckpointMemory.HeadAndBlockPhasesDoNotCoexist). Under mixed precision the count is 12 bytes
// per logit as well (compute-dtype and fp32 tensors kept, fp32 and compute-dtype gradients); which
// tensor is kept in which dtype varies with the stack (an fp32 upcast first, or autocast), the
// total is what the plan uses.
Op make_cross_entropy(double rows, double classes, double elt) {
  constexpr double kFp32 = 4.0;
  const double logits = rows * classes;
  const double kept = elt < kFp32 ? elt + kFp32 : kFp32;
  Op op = make_memory("cross_entropy", 0.0, elt, logits * kept, /*kernels=*/3);
  op.bytes = logits * (elt + 3.0 * kFp32);
  op.transient_bytes = logits * (kFp32 + elt);  // gradients of the log-probabilities and logits
  return op;
}

// transformers' LlamaForCausalLM of 4.31 to 4.45 (4.46 moved the upcast into the loss) under
// autocast: `logits.float()` before the loss (an fp32 copy the model returns; what keeps it is the
// caller's: Workload::head_output_bytes), a shifted contiguous copy, and log_softmax keeping its
// fp32 output; backward holds the gradients of the log-probabilities and of their input. Forward:
// the cast, the copy, log_softmax and the loss; backward: the loss's and log_softmax's gradients,
// the shift's zero-filled full-size gradient and the cast back.
Op make_upcast_cross_entropy(double rows, double classes, double elt) {
  constexpr double kFp32 = 4.0;
  const double logits = rows * classes;
  Op op = make_memory("upcast_cross_entropy", 0.0, elt, kFp32 * logits, /*kernels=*/4);
  op.bytes = logits * (elt + 5.0 * kFp32);
  op.transient_bytes = 2.0 * kFp32 * logits;
  return with_backward(op, logits * (8.0 * kFp32 + elt), /*kernels=*/5);
}

Op make_inplace_cross_entropy(double rows, double classes, double elt) {
  const double logits = rows * classes;
  Op loss = make_memory("inplace_cross_entropy", logits, elt, logits * elt, 1);
  loss.backward_factor = 2.0;  // reads the logits, writes their gradient in place
  return loss;
}

double sum_model_flops(const std::vector<Op>& ops) {
  double total = 0.0;
  for (const Op& op : ops) total += op.model_flops;
  return total;
}

namespace {

Workload build_family_workload(const ModelSpec& model, const WorkloadOptions& options) {
  switch (model.family) {
    case Family::kGptNeox:
    case Family::kRoberta:
    case Family::kVit:
    case Family::kLlama:
      return build_transformer_workload(model, options);
    case Family::kConvnext:
      return build_convnext_workload(model, options);
    case Family::kMamba:
      return build_mamba_workload(model, options);
  }
  return {};
}

}  // namespace

WorkloadOptions planned_workload_options(const ModelSpec& model,
                                         int64_t micro_batch,
                                         bool free_lunch,
                                         const Implementation& implementation,
                                         DeviceKind kind) {
  return {micro_batch,
          model.recipe.precision == Precision::kFp32 ? 4.0 : 2.0,
          /*fused_attention=*/free_lunch,
          /*fast_scan=*/free_lunch,
          implementation,
          kind};
}

Workload build_workload(const ModelSpec& model, const WorkloadOptions& options) {
  Workload w = build_family_workload(model, options);
  const ParamCounts params = count_params(model);
  w.largest_param_tensor = params.largest_tensor;
  w.input_only_embedding_params = params.input_only_embedding;
  w.checkpointed_block_share = options.implementation.checkpointing.block_share;
  w.holds_output = options.implementation.holds_output;
  w.python_forward =
      options.device_kind == DeviceKind::kGpu && python_launches(options.implementation);
  return w;
}

double forward_flops_per_sample(const ModelSpec& model) {
  const Workload w = build_workload(model, WorkloadOptions{});
  double total = sum_model_flops(w.stem_ops) + sum_model_flops(w.head_ops);
  for (const Block& b : w.blocks) total += b.count * sum_model_flops(b.ops);
  return total / static_cast<double>(w.samples);
}

double training_flops_per_sample(const ModelSpec& model) {
  return kTrainingFlopsPerForwardFlop * forward_flops_per_sample(model);
}

}  // namespace gpudays
