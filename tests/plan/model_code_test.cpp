// Whose model code runs the operations (plan/workload.h, ModelCode) and torch.compile: the same
// FLOPs, different kernels and memory traffic. The engine's operations are the default and the
// floor: every other code moves at least as many bytes, and compiling moves no more than eager.
#include <gtest/gtest.h>

#include <string>

#include "accuracy/validate.h"
#include "catalog/calibration_file.h"
#include "catalog/measurement.h"
#include "common/error.h"
#include "plan/device_model.h"
#include "plan/fitted_constants.h"
#include "plan/planner.h"
#include "plan/workload.h"
#include "plan/workload_summary.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

const Op* find_op(const Workload& w, const std::string& name) {
  for (const Op& op : w.blocks.front().ops) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

double total_memory_bytes(const Workload& w) {
  double bytes = 0.0;
  for (const Op& op : w.blocks.front().ops) {
    if (op.cls == OpClass::kMemory) bytes += op.bytes;
  }
  return bytes;
}

Workload workload(const ModelSpec& model, ModelCode code, bool compiled, bool fused = true) {
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.fused_attention = fused;
  o.implementation = {code, compiled};
  return build_workload(model, o);
}

// A Llama-shaped model: gated MLP, grouped-query attention.
ModelSpec llama_like() {
  ModelSpec m = catalog().model("pythia-410m");
  m.arch.gated_ffn = true;
  m.arch.n_kv_heads = 4;
  m.arch.use_parallel_residual = false;
  return m;
}

TEST(ModelCode, NamesRoundTripAndAFailedLookUpNamesTheChoices) {
  for (ModelCode code : {ModelCode::kEngine,
                         ModelCode::kHuggingFace,
                         ModelCode::kFlashAttn,
                         ModelCode::kLlamaReference,
                         ModelCode::kLlmC}) {
    EXPECT_EQ(parse_model_code(to_string(code)), code);
  }
  try {
    parse_model_code("megatron");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("llama_reference"), std::string::npos) << e.what();
  }
}

// Eager Python model code launches its forward from Python; the engine's C++, llm.c's CUDA and
// a compiled graph do not; the host CPU dispatches in op_time_s and has no such split.
TEST(ModelCode, PythonStacksLaunchTheirForwardFromPython) {
  for (ModelCode code : {ModelCode::kHuggingFace,
                         ModelCode::kFlashAttn,
                         ModelCode::kLlamaReference,
                         ModelCode::kMambaSsm}) {
    Implementation eager{.code = code};
    EXPECT_TRUE(python_launches(eager)) << to_string(code);
    Implementation compiled{.code = code, .compiled = true};
    EXPECT_FALSE(python_launches(compiled)) << to_string(code);
  }
  EXPECT_FALSE(python_launches(Implementation{.code = ModelCode::kEngine}));
  EXPECT_FALSE(python_launches(Implementation{.code = ModelCode::kLlmC}));
  const ModelSpec gpt = catalog().model("pythia-410m");
  EXPECT_TRUE(workload(gpt, ModelCode::kHuggingFace, false, false).python_forward);
  EXPECT_FALSE(workload(gpt, ModelCode::kEngine, false, false).python_forward);
  WorkloadOptions on_cpu;
  on_cpu.device_kind = DeviceKind::kCpu;
  on_cpu.implementation.code = ModelCode::kHuggingFace;
  EXPECT_FALSE(build_workload(gpt, on_cpu).python_forward);
}

// Same FLOPs whatever the code; HuggingFace's GPT-2 gelu_new is eight kernels moving nine times
// the engine's GELU bytes (its GPT-NeoX and BERT use the exact GELU, one kernel); the Llama
// reference's fp32 RMSNorm moves nine times a fused norm's.
TEST(ModelCode, EagerCodesLaunchTheirOwnKernels) {
  ModelSpec gpt = catalog().model("pythia-410m");
  const Workload neox = workload(gpt, ModelCode::kHuggingFace, false, /*fused=*/false);
  EXPECT_FALSE(find_op(neox, "gelu_new"));
  EXPECT_TRUE(find_op(neox, "gelu"));
  EXPECT_FALSE(find_op(workload(catalog().model("roberta"), ModelCode::kHuggingFace, false, false),
                       "gelu_new"));
  gpt.arch.learned_position_embeddings = true;  // GPT-2
  const Workload engine = workload(gpt, ModelCode::kEngine, false, /*fused=*/false);
  const Workload hf = workload(gpt, ModelCode::kHuggingFace, false, /*fused=*/false);
  EXPECT_DOUBLE_EQ(sum_model_flops(hf.blocks.front().ops),
                   sum_model_flops(engine.blocks.front().ops));
  const Op* gelu_new = find_op(hf, "gelu_new");
  ASSERT_TRUE(gelu_new);
  // Under autocast torch.pow runs in fp32: 76 bytes per element in ten kernels forward (the
  // engine's GELU moves 4), 118 in fifteen backward.
  EXPECT_EQ(gelu_new->kernels, 10.0);
  EXPECT_DOUBLE_EQ(gelu_new->bytes, 19.0 * find_op(engine, "gelu")->bytes);
  EXPECT_EQ(gelu_new->backward_launches(), 15.0);
  EXPECT_DOUBLE_EQ(gelu_new->backward_traffic(), 118.0 / 76.0 * gelu_new->bytes);
  // GPT-2's division and torch.where move what the engine's scale and masked_fill move.
  EXPECT_DOUBLE_EQ(find_op(hf, "softmax")->bytes, find_op(engine, "softmax")->bytes);
  EXPECT_DOUBLE_EQ(find_op(hf, "softmax")->backward_traffic(),
                   find_op(engine, "softmax")->backward_traffic());

  const ModelSpec llama = llama_like();
  const Workload ref = workload(llama, ModelCode::kLlamaReference, false);
  const Workload ref_engine = workload(llama, ModelCode::kEngine, false);
  EXPECT_DOUBLE_EQ(find_op(ref, "ln_attention")->bytes,
                   9.0 * find_op(ref_engine, "ln_attention")->bytes);
  EXPECT_EQ(find_op(ref, "ln_attention")->kernels, 8.0);
  EXPECT_GT(total_memory_bytes(ref), total_memory_bytes(ref_engine));
}

// The FlashAttention repository's attention without flash keeps the probabilities in the compute
// dtype: the mask added (no backward) and the softmax, 4 passes over the bf16 scores forward and
// the softmax's 3 backward, where the engine's scale, masked_fill, fp32 softmax and cast move 20
// bytes per score forward.
TEST(ModelCode, FlashAttnSoftmaxStaysInTheComputeDtype) {
  const ModelSpec gpt = catalog().model("pythia-410m");
  const Workload plain = workload(gpt, ModelCode::kEngine, false, false);
  const Op* engine = find_op(plain, "softmax");
  const Workload fa = workload(gpt, ModelCode::kFlashAttn, false, false);
  const Op* softmax = find_op(fa, "softmax");
  ASSERT_TRUE(engine && softmax);
  const double elt = 2.0;
  EXPECT_DOUBLE_EQ(softmax->saved_bytes, engine->saved_bytes * elt / (4.0 + elt));
  EXPECT_DOUBLE_EQ(softmax->bytes, engine->bytes * 4.0 * elt / 20.0);
  EXPECT_DOUBLE_EQ(softmax->backward_traffic(), softmax->bytes * 3.0 / 4.0);
  EXPECT_TRUE(find_op(fa, "gelu_epilogue"));
  EXPECT_EQ(find_op(fa, "gelu_epilogue")->kernels, 0.0);
  // A half-precision model without autocast (apex O2) keeps its probabilities the same way.
  WorkloadOptions o2;
  o2.micro_batch_size = 2;
  o2.fused_attention = false;
  o2.implementation.half_precision_model = true;
  const Op* half = find_op(build_workload(gpt, o2), "softmax");
  ASSERT_TRUE(half);
  EXPECT_DOUBLE_EQ(half->saved_bytes, softmax->saved_bytes);
  EXPECT_DOUBLE_EQ(half->bytes, softmax->bytes);
  // Its kernel before the softmax (a scale, or Megatron-LM's masked_fill_) has a backward.
  EXPECT_DOUBLE_EQ(half->backward_traffic(), softmax->bytes * 5.0 / 4.0);
}

// Compiled: every memory-bound operation is one kernel and moves no more than eager.
TEST(ModelCode, CompilingFusesEachChainIntoOneKernel) {
  const ModelSpec llama = llama_like();
  for (ModelCode code : {ModelCode::kEngine, ModelCode::kLlamaReference}) {
    const Workload eager = workload(llama, code, false);
    const Workload compiled = workload(llama, code, true);
    ASSERT_EQ(eager.blocks.front().ops.size(), compiled.blocks.front().ops.size());
    for (size_t i = 0; i < eager.blocks.front().ops.size(); ++i) {
      const Op& e = eager.blocks.front().ops[i];
      const Op& c = compiled.blocks.front().ops[i];
      EXPECT_LE(c.bytes, e.bytes) << e.name;
      if (c.cls == OpClass::kMemory) {
        EXPECT_LE(c.kernels, 1.0) << c.name;
      }
    }
  }
  EXPECT_LT(total_memory_bytes(workload(llama, ModelCode::kLlamaReference, true)),
            total_memory_bytes(workload(llama, ModelCode::kLlamaReference, false)) / 2.0);
}

// What a plain attention's dropout keeps: on a GPU its byte mask (the probabilities the second
// product reads are the softmax's cast copy, counted there); on the host CPU, whose dropout keeps
// a noise tensor of its input's type, that tensor; a half-precision model (no autocast, no cast)
// keeps its output in the model's type beside the mask, transformers' code too.
TEST(ModelCode, AttentionDropoutKeepsWhatEachDeviceAndPrecisionKeeps) {
  ModelSpec gpt = catalog().model("pythia-410m");
  gpt.recipe.dropout = 0.1;
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.activation_bytes = 2.0;
  const auto saved = [&](const char* name) {
    return find_op(build_workload(gpt, o), name)->saved_bytes;
  };
  const double scores =
      2.0 * gpt.arch.n_heads * static_cast<double>(gpt.arch.seq_len) * gpt.arch.seq_len;
  const double hidden = 2.0 * gpt.arch.seq_len * static_cast<double>(gpt.arch.d_model);
  EXPECT_DOUBLE_EQ(saved("attention_dropout"), scores * 1.0);
  EXPECT_DOUBLE_EQ(saved("dropout"), hidden * 1.0);
  o.device_kind = DeviceKind::kCpu;
  EXPECT_DOUBLE_EQ(saved("attention_dropout"), scores * 2.0);
  EXPECT_DOUBLE_EQ(saved("dropout"), hidden * 2.0);
  o.device_kind = DeviceKind::kGpu;
  for (ModelCode code : {ModelCode::kEngine, ModelCode::kHuggingFace}) {
    o.implementation = {code, /*compiled=*/false};
    o.implementation.half_precision_model = true;
    EXPECT_DOUBLE_EQ(saved("softmax") + saved("attention_dropout"), scores * (2.0 + 1.0 + 2.0));
  }
}

// A compiler draws dropout's random numbers inside the chain around it: compiled, a dropout adds
// only its mask's write and no kernel; it keeps the same tensors for backward, but for the
// attention's: eagerly the probabilities the second product keeps are counted with the softmax
// (its cast), so its dropout adds only the byte mask; compiled, the mask and those probabilities.
TEST(ModelCode, CompilingFoldsDropoutIntoItsChain) {
  ModelSpec gpt = catalog().model("pythia-410m");
  gpt.recipe.dropout = 0.1;
  const Workload eager = workload(gpt, ModelCode::kEngine, false, /*fused=*/false);
  const Workload compiled = workload(gpt, ModelCode::kEngine, true, /*fused=*/false);
  for (const char* name : {"dropout", "attention_dropout"}) {
    const Op* e = find_op(eager, name);
    const Op* c = find_op(compiled, name);
    ASSERT_TRUE(e && c) << name;
    EXPECT_EQ(e->kernels, 1.0) << name;
    EXPECT_EQ(c->kernels, 0.0) << name;
    const bool attention = std::string(name) == "attention_dropout";
    EXPECT_DOUBLE_EQ(c->saved_bytes, (attention ? 3.0 : 1.0) * e->saved_bytes) << name;
    // Eagerly the input read, the output and its byte mask written (5 bytes per element in
    // bf16), and as much backward; compiled, the mask.
    EXPECT_DOUBLE_EQ(c->bytes, e->bytes / 5.0) << name;
    EXPECT_DOUBLE_EQ(e->backward_traffic(), e->bytes) << name;
  }
}

// The FlashAttention repository's GPT fuses its hidden dropout into dropout_add_layer_norm (every
// training configuration sets fused_dropout_add_ln): the mask's write, no kernel, uncompiled; its
// plain attention path drops out the probabilities with an eager nn.Dropout.
TEST(ModelCode, FlashAttnFusesTheHiddenDropoutOnly) {
  ModelSpec gpt = catalog().model("pythia-410m");
  gpt.recipe.dropout = 0.1;
  const Workload engine = workload(gpt, ModelCode::kEngine, false, /*fused=*/false);
  const Workload flash = workload(gpt, ModelCode::kFlashAttn, false, /*fused=*/false);
  const Op* hidden = find_op(flash, "dropout");
  const Op* eager_hidden = find_op(engine, "dropout");
  ASSERT_TRUE(hidden && eager_hidden);
  EXPECT_EQ(hidden->kernels, 0.0);
  EXPECT_DOUBLE_EQ(hidden->bytes, eager_hidden->bytes / 5.0);
  EXPECT_DOUBLE_EQ(hidden->saved_bytes, eager_hidden->saved_bytes);
  const Op* attention = find_op(flash, "attention_dropout");
  ASSERT_TRUE(attention);
  EXPECT_EQ(attention->kernels, 1.0);
  EXPECT_DOUBLE_EQ(attention->bytes, find_op(engine, "attention_dropout")->bytes);
}

// Its residual stream is fp32 (flash_attn/models/gpt.py): each LayerNorm keeps 4 bytes per
// element of its input where the engine keeps the compute dtype's 2.
TEST(ModelCode, FlashAttnKeepsAnFp32Residual) {
  ModelSpec gpt = catalog().model("pythia-410m");
  gpt.arch.learned_position_embeddings = true;  // GPT-2: both LayerNorms keep their input
  gpt.arch.use_parallel_residual = false;
  const Workload flash_workload = workload(gpt, ModelCode::kFlashAttn, false);
  const Workload engine_workload = workload(gpt, ModelCode::kEngine, false);
  for (const char* norm : {"ln_attention", "ln_mlp"}) {
    const Op* flash = find_op(flash_workload, norm);
    const Op* engine = find_op(engine_workload, norm);
    ASSERT_TRUE(flash && engine) << norm;
    EXPECT_GT(engine->saved_bytes, 0.0) << norm;
    EXPECT_DOUBLE_EQ(flash->saved_bytes, 2.0 * engine->saved_bytes) << norm;
  }
}

// Pythia-410M at 8,192 tokens, long enough for a fused attention's compute to dominate its
// traffic, with fused attention at micro-batch 2.
ModelSpec long_sequence_gpt() {
  ModelSpec gpt = catalog().model("pythia-410m");
  gpt.arch.seq_len = 8192;
  return gpt;
}
WorkloadOptions fused_at_micro_batch_2() {
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.fused_attention = true;
  return o;
}

// The first FlashAttention runs at half FlashAttention-2's speed (Dao 2023, abstract: "around
// 2x"): its fused attention's compute time doubles, nothing else moves.
TEST(ModelCode, FlashAttentionOneIsHalfAsFast) {
  const ModelSpec gpt = long_sequence_gpt();
  WorkloadOptions o = fused_at_micro_batch_2();
  o.implementation.code = ModelCode::kFlashAttn;
  const Workload two = build_workload(gpt, o);
  o.implementation.attention_kernel = AttentionKernel::kFlashAttention1;
  const Workload one = build_workload(gpt, o);
  const Op* fa2 = find_op(two, "fused_attention");
  const Op* fa1 = find_op(one, "fused_attention");
  ASSERT_TRUE(fa1 && fa2);
  EXPECT_EQ(fa2->attention_kernel, AttentionKernel::kFlashAttention2);
  EXPECT_EQ(fa1->attention_kernel, AttentionKernel::kFlashAttention1);
  const GpuSpec& gpu = catalog().gpu("a100-80gb-sxm");
  const DeviceModel device(gpu, Precision::kBf16, /*free_lunch=*/true);
  ASSERT_EQ(one.blocks.front().ops.size(), two.blocks.front().ops.size());
  for (size_t i = 0; i < one.blocks.front().ops.size(); ++i) {
    const Op& a = one.blocks.front().ops[i];
    const Op& b = two.blocks.front().ops[i];
    for (bool backward : {false, true}) {
      const double factor = &a == fa1 ? 2.0 : 1.0;
      EXPECT_NEAR(device.op_time_s(a, backward),
                  factor * device.op_time_s(b, backward),
                  1e-9 * device.op_time_s(a, backward))
          << a.name << (backward ? " backward" : " forward");
    }
  }
}

// Which kernel runs a fused attention: flash-attn's code runs FlashAttention-2; torch's SDPA (the
// engine, Meta's code) runs cuDNN's on Hopper from torch 2.10; a case may name its own.
TEST(ModelCode, EachModelCodeNamesItsAttentionKernel) {
  Implementation impl;
  EXPECT_EQ(attention_kernel(impl), AttentionKernel::kCudnn);
  for (ModelCode code : {ModelCode::kLlamaReference,
                         ModelCode::kHuggingFace,
                         ModelCode::kLlmC,
                         ModelCode::kMambaSsm}) {
    impl.code = code;
    EXPECT_EQ(attention_kernel(impl), AttentionKernel::kCudnn) << to_string(code);
  }
  // The workload's op carries it: the engine's fused attention is cuDNN's.
  WorkloadOptions engine = fused_at_micro_batch_2();
  EXPECT_EQ(
      find_op(build_workload(long_sequence_gpt(), engine), "fused_attention")->attention_kernel,
      AttentionKernel::kCudnn);
  impl.code = ModelCode::kFlashAttn;
  EXPECT_EQ(attention_kernel(impl), AttentionKernel::kFlashAttention2);
  impl.attention_kernel = AttentionKernel::kFlashAttention1;
  EXPECT_EQ(attention_kernel(impl), AttentionKernel::kFlashAttention1);
  for (const std::string& name : attention_kernel_names()) {
    EXPECT_EQ(to_string(parse_attention_kernel(name)), name);
  }
  EXPECT_THROW(parse_attention_kernel("flash_attention_3"), InputError);
}

// The long-sequence GPT's fused attention run by `kernel`.
Op long_sequence_attention(AttentionKernel kernel) {
  WorkloadOptions o = fused_at_micro_batch_2();
  o.implementation.attention_kernel = kernel;
  return *find_op(build_workload(long_sequence_gpt(), o), "fused_attention");
}

// FlashAttention-2 keeps Ampere's instructions on Hopper: there it reaches 0.42 of the matmul
// ceiling forward and backward (Dao 2023, Fig. 7: up to 335 TFLOPs/s on an H100), where cuDNN's
// Hopper kernels keep the A100 midpoints (0.70 and 0.59). On an A100 the two are the same kernel
// rate (SDPA runs FlashAttention-2 there).
TEST(ModelCode, FlashAttentionTwoIsSlowerOnHopperThanCudnnsKernels) {
  const Op fa2 = long_sequence_attention(AttentionKernel::kFlashAttention2);
  const Op cudnn = long_sequence_attention(AttentionKernel::kCudnn);
  const DeviceModel h100(catalog().gpu("h100-sxm"), Precision::kBf16, /*free_lunch=*/true);
  const DeviceModel a100(catalog().gpu("a100-80gb-sxm"), Precision::kBf16, /*free_lunch=*/true);
  EXPECT_NEAR(h100.op_time_s(fa2, false) / h100.op_time_s(cudnn, false), 0.70 / 0.42, 1e-6);
  EXPECT_NEAR(h100.op_time_s(fa2, true) / h100.op_time_s(cudnn, true), 0.59 / 0.42, 1e-6);
  for (bool backward : {false, true}) {
    EXPECT_DOUBLE_EQ(a100.op_time_s(fa2, backward), a100.op_time_s(cudnn, backward));
  }
}

// FlashAttention-2 on a B200 runs at about its H100 rate (both on mma.sync, measured 330-360
// TFLOPs/s), not at the B200's larger ceiling; cuDNN's kernels scale with the ceiling.
TEST(ModelCode, FlashAttentionTwoOnBlackwellRunsAtItsMeasuredRate) {
  const Op fa2 = long_sequence_attention(AttentionKernel::kFlashAttention2);
  const Op cudnn = long_sequence_attention(AttentionKernel::kCudnn);
  const DeviceModel h100(catalog().gpu("h100-sxm"), Precision::kBf16, /*free_lunch=*/true);
  const DeviceModel b200(catalog().gpu("b200"), Precision::kBf16, /*free_lunch=*/true);
  const DeviceModelConstants c;
  for (bool backward : {false, true}) {
    const double rate_ratio = h100.op_time_s(fa2, backward) / b200.op_time_s(fa2, backward);
    EXPECT_NEAR(rate_ratio,
                b200.ceiling_flops() * c.flash_attention_2_blackwell /
                    (h100.ceiling_flops() * c.flash_attention_2_hopper),
                1e-6);
    EXPECT_GT(rate_ratio, 0.85);
    EXPECT_LT(rate_ratio, 1.15) << "FlashAttention-2 is about as fast on both";
    EXPECT_GT(h100.op_time_s(cudnn, backward) / b200.op_time_s(cudnn, backward), 1.8);
  }
}

// A fused attention's tiles are GEMMs whose inner and outer dimension is the head's: at head
// dimension 64 it runs fewer FLOP/s than at 128 (FlashAttention-2, Figs. 4-7), and at 128 its
// rates are the kernels' own.
TEST(ModelCode, NarrowHeadsRunFusedAttentionSlower) {
  ModelSpec wide = long_sequence_gpt();  // 1,024 wide: 16 heads of 64
  ModelSpec narrow_heads = wide;
  wide.arch.n_heads = 8;  // 8 heads of 128: the same FLOPs
  const WorkloadOptions o = fused_at_micro_batch_2();
  const Op w128 = *find_op(build_workload(wide, o), "fused_attention");
  const Op w64 = *find_op(build_workload(narrow_heads, o), "fused_attention");
  ASSERT_EQ(w128.k, 128.0);
  ASSERT_EQ(w64.k, 64.0);
  ASSERT_DOUBLE_EQ(w128.exec_flops, w64.exec_flops);
  const DeviceModel a100(catalog().gpu("a100-80gb-sxm"), Precision::kBf16, /*free_lunch=*/true);
  for (bool backward : {false, true}) {
    const double ratio = a100.op_time_s(w64, backward) / a100.op_time_s(w128, backward);
    // s(128) / s(64) with the default half dimension, 128: (128 / 256) / (64 / 192) = 1.5.
    EXPECT_NEAR(ratio, 1.5, 1e-9) << (backward ? "backward" : "forward");
  }
  // At head dimension 128 a long sequence runs at FlashAttention-2's midpoint, 0.70 forward.
  const DeviceModelConstants c;
  const double sequence = 8192.0 / (8192.0 + c.matmul_half_dim);
  EXPECT_NEAR(w128.exec_flops / a100.op_time_s(w128, false),
              a100.ceiling_flops() * c.fused_attention_forward * sequence,
              1e-6 * a100.ceiling_flops());
}

// The repository's own GPT hands its packed qkv to the flash kernel and adds the residual inside
// its LayerNorm kernels: no split or merge copies, no separate residual add, the kernel's output
// kept once. A Llama that only calls flash-attn's kernels (lit_gpt) keeps all of them.
TEST(ModelCode, TheFlashAttentionGptPacksQkvAndFusesItsResidualAdds) {
  ModelSpec gpt = catalog().model("pythia-410m");
  gpt.arch.learned_position_embeddings = true;
  gpt.arch.use_parallel_residual = false;
  const Workload flash = workload(gpt, ModelCode::kFlashAttn, false);
  EXPECT_EQ(find_op(flash, "split_heads"), nullptr);
  EXPECT_EQ(find_op(flash, "merge_heads"), nullptr);
  EXPECT_EQ(find_op(flash, "residual"), nullptr);
  EXPECT_EQ(find_op(flash, "attention_out")->saved_bytes, 0.0);
  const Op* norm = find_op(flash, "ln_mlp");
  const double hidden = 2.0 * static_cast<double>(gpt.arch.seq_len * gpt.arch.d_model);
  EXPECT_DOUBLE_EQ(norm->bytes, hidden * (2.0 * 2.0 + 2.0 * 4.0));  // bf16 in/out, fp32 residual
  EXPECT_EQ(norm->kernels, 1.0);
  const Workload engine = workload(gpt, ModelCode::kEngine, false);
  EXPECT_NE(find_op(engine, "split_heads"), nullptr);
  EXPECT_GT(find_op(engine, "attention_out")->saved_bytes, 0.0);
  const Workload lit_gpt =
      workload(catalog().model("tinyllama-1.1b"), ModelCode::kFlashAttn, false);
  EXPECT_NE(find_op(lit_gpt, "split_heads"), nullptr);
  EXPECT_NE(find_op(lit_gpt, "residual"), nullptr);
  EXPECT_GT(find_op(lit_gpt, "attention_out")->saved_bytes, 0.0);
}

// llm.c's fused classifier reads the logits twice and overwrites them with their gradient in one
// forward kernel: a fraction of the unfused cross-entropy's traffic, none in backward.
TEST(ModelCode, LlmCFusesTheClassifier) {
  const ModelSpec gpt = catalog().model("pythia-410m");
  const Workload engine = workload(gpt, ModelCode::kEngine, false);
  const Workload llmc = workload(gpt, ModelCode::kLlmC, false);
  ASSERT_EQ(llmc.head_ops.back().name, std::string("fused_classifier"));
  EXPECT_EQ(llmc.head_ops.back().backward_factor, 0.0);
  // Forward and backward together: under a third of the unfused traffic.
  const auto traffic = [](const Op& op) { return op.bytes * (1.0 + op.backward_factor); };
  EXPECT_LT(3.0 * traffic(llmc.head_ops.back()), traffic(engine.head_ops.back()));
  EXPECT_LT(llmc.head_ops.back().saved_bytes, engine.head_ops.back().saved_bytes);
  EXPECT_LT(total_memory_bytes(llmc), total_memory_bytes(engine));
}

// transformers' Llama of the 4.x era upcasts the logits to fp32 before the loss and returns them:
// log_softmax keeps 4 bytes per logit and its backward holds two fp32 gradients (12 at the head's
// backward, as the generic loss), the returned fp32 logits are the output's (4 bytes per logit,
// kept by a loop that holds the output), and as the loss's forward ends the logits, the shifted
// copy and the log-probabilities are alive (12; 8 beside a held output, which counts the logits).
TEST(ModelCode, TransformersLlamaUpcastsItsLogitsAndReturnsThem) {
  ModelSpec llama = catalog().model("pythia-410m");
  llama.family = Family::kLlama;
  llama.arch.gated_ffn = true;
  llama.arch.use_parallel_residual = false;
  const Workload hf = workload(llama, ModelCode::kHuggingFace, false);
  const Workload ref = workload(llama, ModelCode::kLlamaReference, false);
  const Op& upcast = hf.head_ops.back();
  const Op& generic = ref.head_ops.back();
  ASSERT_EQ(upcast.name, std::string("upcast_cross_entropy"));
  ASSERT_EQ(generic.name, std::string("cross_entropy"));
  const double logits = 2.0 * llama.arch.seq_len * llama.arch.vocab_size;  // micro-batch 2
  EXPECT_DOUBLE_EQ(upcast.saved_bytes, 4.0 * logits);
  EXPECT_DOUBLE_EQ(upcast.saved_bytes + upcast.transient_bytes, 12.0 * logits);
  EXPECT_DOUBLE_EQ(hf.head_output_bytes, 4.0 * logits);
  EXPECT_DOUBLE_EQ(upcast.saved_bytes + hf.head_forward_extra_bytes, 12.0 * logits);
  EXPECT_GT(upcast.bytes, generic.bytes);  // the cast and the shifted copy
  EXPECT_EQ(ref.head_output_bytes, 0.0);   // Meta's code returns no logits to hold
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.fused_attention = true;
  o.implementation.code = ModelCode::kHuggingFace;
  o.implementation.holds_output = true;
  const Workload held = build_workload(llama, o);
  EXPECT_TRUE(held.holds_output);
  EXPECT_DOUBLE_EQ(upcast.saved_bytes + held.head_forward_extra_bytes, 8.0 * logits);
}

// transformers' GPT-style head returns its logits in the compute dtype: below fp32 they are the
// logits the generic cross entropy keeps (a held output adds nothing: not counted twice), and the
// shifted copy is alive at the forward's end; in fp32 the loss keeps only its log-probabilities,
// so the returned logits come on top.
TEST(ModelCode, TransformersGptHeadReturnsTheLogitsItsLossKeeps) {
  const ModelSpec gpt2 = catalog().model("pythia-410m");
  const double logits = 2.0 * gpt2.arch.seq_len * gpt2.arch.vocab_size;  // micro-batch 2
  const Workload bf16 = workload(gpt2, ModelCode::kHuggingFace, false);
  const Op& loss = bf16.head_ops.back();
  ASSERT_EQ(loss.name, std::string("cross_entropy"));
  EXPECT_DOUBLE_EQ(loss.saved_bytes, (2.0 + 4.0) * logits);
  EXPECT_EQ(bf16.head_output_bytes, 0.0);
  EXPECT_DOUBLE_EQ(bf16.head_forward_extra_bytes, 2.0 * logits);  // the shifted copy
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.fused_attention = true;
  o.implementation.code = ModelCode::kHuggingFace;
  o.implementation.holds_output = true;
  const Workload held = build_workload(gpt2, o);
  EXPECT_EQ(held.head_output_bytes, 0.0);
  EXPECT_DOUBLE_EQ(held.head_forward_extra_bytes, 2.0 * logits);
  o.activation_bytes = 4.0;  // fp32
  const Workload fp32_held = build_workload(gpt2, o);
  EXPECT_DOUBLE_EQ(fp32_held.head_ops.back().saved_bytes, 4.0 * logits);
  EXPECT_DOUBLE_EQ(fp32_held.head_output_bytes, 4.0 * logits);
  EXPECT_DOUBLE_EQ(fp32_held.head_forward_extra_bytes, 4.0 * logits);
  o.implementation.holds_output = false;
  const Workload fp32 = build_workload(gpt2, o);
  EXPECT_DOUBLE_EQ(fp32.head_forward_extra_bytes, 8.0 * logits);  // copy and returned logits
  // An encoder's head shifts nothing.
  const Workload roberta = workload(catalog().model("roberta"), ModelCode::kHuggingFace, false);
  EXPECT_EQ(roberta.head_forward_extra_bytes, 0.0);
}

// With use_cache on in training (returns_key_values), every layer returns its keys and values:
// 2 x tokens x kv width x 2 bytes per layer, summed for the memory model (which places them:
// MemoryModel.WhatTheOutputHoldsLivesWhereTheLoopKeepsIt); no block keeps more for them.
TEST(ModelCode, ReturnedKeysAndValuesAreSummedPerLayer) {
  ModelSpec llama = catalog().model("pythia-410m");
  llama.family = Family::kLlama;
  llama.arch.gated_ffn = true;
  llama.arch.use_parallel_residual = false;
  llama.arch.n_kv_heads = 4;
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.fused_attention = true;
  o.implementation.code = ModelCode::kHuggingFace;
  const DeviceModel device(catalog().gpu("a100-80gb-sxm"), Precision::kBf16, true, {});
  const WorkloadSummary plain = summarize(build_workload(llama, o), device);
  o.implementation.returns_key_values = true;
  const Workload returning = build_workload(llama, o);
  const WorkloadSummary kept = summarize(returning, device);
  const double tokens = 2.0 * llama.arch.seq_len;
  const double kv_width = 4.0 * (llama.arch.d_model / llama.arch.n_heads);
  const double per_layer = 2.0 * tokens * kv_width * 2.0;
  EXPECT_DOUBLE_EQ(returning.blocks.front().returned_bytes, per_layer);
  EXPECT_EQ(plain.returned_bytes, 0.0);
  EXPECT_NEAR(kept.returned_bytes, llama.arch.n_layers * per_layer, 1e-6 * per_layer);
  EXPECT_DOUBLE_EQ(kept.checkpointed_block_bytes, plain.checkpointed_block_bytes);
  EXPECT_DOUBLE_EQ(kept.block_saved_bytes, plain.block_saved_bytes);
}

// llm.c with cuDNN attention reads q, k and v from the packed projection by strides and writes
// the projection's input layout: no permute kernels. Its residual adds are fused into the next
// LayerNorm's kernel, and the residual gradient accumulates in the norm's backward: the adds move
// the branch's output in and the sum out, with no launch and no backward of their own.
TEST(ModelCode, LlmCAttendsOnThePackedProjectionAndAddsInItsNorms) {
  const ModelSpec gpt = catalog().model("pythia-410m");
  const Workload engine = workload(gpt, ModelCode::kEngine, false);
  const Workload llmc = workload(gpt, ModelCode::kLlmC, false);
  EXPECT_NE(find_op(engine, "split_heads"), nullptr);
  EXPECT_NE(find_op(engine, "merge_heads"), nullptr);
  EXPECT_EQ(find_op(llmc, "split_heads"), nullptr);
  EXPECT_EQ(find_op(llmc, "merge_heads"), nullptr);
  EXPECT_EQ(find_op(llmc, "attention_out")->saved_bytes, 0.0);  // the attention's kept output
  // Without the fused kernel (llm.c's own attention kernels) the permutes run.
  const Workload unfused = workload(gpt, ModelCode::kLlmC, false, /*fused=*/false);
  EXPECT_NE(find_op(unfused, "split_heads"), nullptr);
  const Op* residual = find_op(llmc, "residual");
  const Op* eager_residual = find_op(engine, "residual");
  ASSERT_TRUE(residual && eager_residual);
  EXPECT_EQ(residual->kernels, 0.0);
  EXPECT_EQ(residual->backward_factor, 0.0);
  EXPECT_DOUBLE_EQ(residual->bytes, eager_residual->bytes * 4.0 / 6.0);
}

// A half-precision model's plain attention as its code runs: each kernel before the softmax reads
// and writes the scores once more (NVIDIA's BERT divides the scores, then adds the mask), and
// q, k and v taken by strides (torch.bmm on a sequence-first layout) need no copy.
TEST(ModelCode, HalfPrecisionAttentionCountsItsScoreKernelsAndStridedHeads) {
  const ModelSpec bert = catalog().model("roberta");
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.implementation.half_precision_model = true;
  const Workload masked = build_workload(bert, o);
  o.implementation.attention_score_kernels = 2;
  const Workload scaled = build_workload(bert, o);
  const Op* one = find_op(masked, "softmax");
  const Op* two = find_op(scaled, "softmax");
  ASSERT_TRUE(one && two);
  EXPECT_DOUBLE_EQ(two->bytes, one->bytes * 6.0 / 4.0);  // three kernels of two passes, not two
  EXPECT_EQ(two->kernels, 3.0);
  EXPECT_EQ(two->saved_bytes, one->saved_bytes);  // the probabilities alone are kept
  EXPECT_NE(find_op(scaled, "split_heads"), nullptr);
  o.implementation.strided_heads = true;
  const Workload strided = build_workload(bert, o);
  EXPECT_EQ(find_op(strided, "split_heads"), nullptr);
  EXPECT_NE(find_op(strided, "merge_heads"), nullptr);  // the context is made contiguous
  o.fused_attention = true;  // a fused kernel takes its heads as the engine lays them out
  EXPECT_NE(find_op(build_workload(bert, o), "split_heads"), nullptr);
}

// A memory-bound kernel's backward as its code moves it: the device model charges the op's own
// backward traffic and launches where it has them, backward_factor times the forward's otherwise.
TEST(ModelCode, BackwardTrafficIsTheOpsOwnWhereItHasOne) {
  const DeviceModel device(catalog().gpu("a100"), Precision::kBf16, false, {});
  Op op = make_memory("x", 1e9, 2.0, 0.0);
  const double forward_s = device.op_time_s(op, false);
  EXPECT_DOUBLE_EQ(device.op_time_s(op, true), 2.0 * forward_s);  // backward_factor 2
  op.backward_bytes = 0.5 * op.bytes;
  op.backward_kernels = 1.0;
  EXPECT_DOUBLE_EQ(device.op_time_s(op, true), 0.5 * forward_s);
  op.backward_bytes = 0.0;
  op.backward_kernels = 0.0;
  EXPECT_EQ(device.op_time_s(op, true), 0.0);
  EXPECT_EQ(device.op_host_s(op, true, false), 0.0);
}

// The backward of the engine's layer as autograd runs it: GELU reads the gradient and the input
// (3 passes), each residual add's gradient passes through and one add gathers two (as much as the
// forward), the heads' copies copy their gradients back once, and every biased projection's
// gradient is summed over the tokens (a reduction with no forward).
TEST(ModelCode, EngineBackwardMovesWhatAutogradMoves) {
  ModelSpec gpt = catalog().model("pythia-410m");
  const Workload w = workload(gpt, ModelCode::kEngine, false, /*fused=*/false);
  const Op* gelu = find_op(w, "gelu");
  const Op* residual = find_op(w, "residual");
  const Op* split = find_op(w, "split_heads");
  const Op* bias = find_op(w, "bias_gradients");
  ASSERT_TRUE(gelu && residual && split && bias);
  EXPECT_DOUBLE_EQ(gelu->backward_traffic(), 1.5 * gelu->bytes);
  EXPECT_DOUBLE_EQ(residual->backward_traffic(), residual->bytes);
  EXPECT_DOUBLE_EQ(split->backward_traffic(), split->bytes);
  const double n = 2.0 * gpt.arch.seq_len, d = gpt.arch.d_model, f = gpt.arch.d_ffn;
  EXPECT_EQ(bias->bytes, 0.0);
  EXPECT_DOUBLE_EQ(bias->backward_traffic(), n * (3 * d + d + f + d) * 2.0);
  EXPECT_EQ(bias->backward_launches(), 4.0);
  // Llama has no biases; the FlashAttention GPT sums them in its weight-gradient GEMM.
  EXPECT_EQ(find_op(workload(catalog().model("tinyllama-1.1b"), ModelCode::kEngine, false),
                    "bias_gradients"),
            nullptr);
  EXPECT_EQ(find_op(workload(gpt, ModelCode::kFlashAttn, false), "bias_gradients"), nullptr);
}

// Autocast over fp32 parameters with the residual stream in fp32 (timm's ViT, transformers' GPT-2
// and BERT): fp32 norms and the next Linear's cast, fp32 residual adds; Linear's bias by a kernel
// of its own (PyTorch of 2020) adds a read and a write of each biased output.
TEST(ModelCode, Fp32ResidualStreamAndSeparateBiasAddsMoveMore) {
  const ModelSpec vit = catalog().model("vit");
  WorkloadOptions o;
  o.micro_batch_size = 2;
  const Workload half = build_workload(vit, o);
  o.implementation.fp32_residual_stream = true;
  const Workload stream = build_workload(vit, o);
  const double n = 2.0 * vit.arch.seq_len, d = vit.arch.d_model;
  EXPECT_DOUBLE_EQ(find_op(stream, "ln_attention")->bytes, n * d * (3 * 4.0 + 2.0));
  EXPECT_DOUBLE_EQ(find_op(half, "ln_attention")->bytes, n * d * 2 * 2.0);
  EXPECT_DOUBLE_EQ(find_op(stream, "residual")->bytes, 2 * n * d * (2 * 4.0 + 2.0));
  EXPECT_GT(find_op(stream, "residual")->backward_traffic(),
            find_op(half, "residual")->backward_traffic());
  EXPECT_EQ(find_op(stream, "linear_bias_adds"), nullptr);
  o.implementation.linear_bias_add = true;
  const Op* adds = find_op(build_workload(vit, o), "linear_bias_adds");
  ASSERT_TRUE(adds);
  EXPECT_DOUBLE_EQ(adds->bytes, 2.0 * n * (3 * d + d + vit.arch.d_ffn + d) * 2.0);
  EXPECT_EQ(adds->backward_traffic(), 0.0);  // its gradient is bias_gradients'
  // In fp32 there is no half-precision branch: the flag changes nothing.
  o.activation_bytes = 4.0;
  o.implementation.linear_bias_add = false;
  const Workload fp32_stream = build_workload(vit, o);
  o.implementation.fp32_residual_stream = false;
  EXPECT_DOUBLE_EQ(find_op(fp32_stream, "residual")->bytes,
                   find_op(build_workload(vit, o), "residual")->bytes);
}

// timm's ConvNeXt: channels-last blocks have no permute copies; under autocast the stream is fp32
// (the depthwise convolution's input cast down, LayerNorm in fp32, an fp32 layer scale and
// residual). The depthwise convolution's op moves its input and output once; a GPU's kernels are
// charged depthwise_passes of that.
TEST(ModelCode, TimmConvnextRunsChannelsLastWithAnFp32Stream) {
  const ModelSpec convnext = catalog().model("convnext-large-1k");
  WorkloadOptions o;
  o.micro_batch_size = 2;
  const Workload hf = build_workload(convnext, o);
  auto block_op = [](const Workload& w, const std::string& name) -> const Op* {
    for (const Op& op : w.blocks.front().ops)
      if (name == op.name) return &op;
    return nullptr;
  };
  EXPECT_TRUE(block_op(hf, "permute_in") && block_op(hf, "permute_out"));
  EXPECT_FALSE(block_op(hf, "cast_in"));
  o.implementation.channels_last = true;
  o.implementation.fp32_residual_stream = true;
  const Workload timm = build_workload(convnext, o);
  EXPECT_FALSE(block_op(timm, "permute_in") || block_op(timm, "permute_out"));
  ASSERT_TRUE(block_op(timm, "cast_in") && block_op(timm, "residual"));
  EXPECT_GT(block_op(timm, "residual")->bytes, block_op(hf, "residual")->bytes);
  const Op* dw = block_op(hf, "depthwise_conv7x7");
  ASSERT_TRUE(dw && dw->depthwise_2d);
  DeviceModelConstants three, one;
  one.depthwise_passes = 1.0;
  const DeviceModel gpu3(catalog().gpu("rtx-3090"), Precision::kFp16, false, three);
  const DeviceModel gpu1(catalog().gpu("rtx-3090"), Precision::kFp16, false, one);
  EXPECT_NEAR(gpu3.op_time_s(*dw, false), 3.0 * gpu1.op_time_s(*dw, false), 1e-12);
}

// NVIDIA's BERT gathers the masked positions before its MLM head: the head's GEMMs and loss run on
// b x max_predictions rows, not b x T; the encoder is unchanged.
TEST(ModelCode, AnMlmHeadOnMaskedPositionsRunsOnThoseRowsOnly) {
  const ModelSpec roberta = catalog().model("roberta");
  WorkloadOptions o;
  o.micro_batch_size = 4;
  const Workload all = build_workload(roberta, o);
  o.implementation.mlm_predictions = 20;
  const Workload masked = build_workload(roberta, o);
  const auto head_op = [](const Workload& w, const std::string& name) -> const Op* {
    for (const Op& op : w.head_ops) {
      if (name == op.name) return &op;
    }
    return nullptr;
  };
  const double t = static_cast<double>(roberta.arch.seq_len);
  ASSERT_TRUE(head_op(all, "unembed") && head_op(masked, "unembed"));
  EXPECT_DOUBLE_EQ(head_op(all, "unembed")->m, 4.0 * t);
  EXPECT_DOUBLE_EQ(head_op(masked, "unembed")->m, 4.0 * 20.0);
  EXPECT_DOUBLE_EQ(head_op(masked, "lm_head_dense")->m, 4.0 * 20.0);
  EXPECT_NE(head_op(masked, "mlm_gather"), nullptr);
  EXPECT_EQ(head_op(all, "mlm_gather"), nullptr);
  EXPECT_DOUBLE_EQ(head_op(masked, "cross_entropy")->saved_bytes * t,
                   head_op(all, "cross_entropy")->saved_bytes * 20.0);
  EXPECT_DOUBLE_EQ(total_memory_bytes(masked), total_memory_bytes(all)) << "the blocks";
}

// Code that turns TF32 on globally runs fp32 GEMMs at the TF32 peak without free-lunch; otherwise
// TF32 comes with free-lunch only.
TEST(ModelCode, Tf32WithoutFreeLunchUsesTheTf32Peak) {
  const GpuSpec& a100 = catalog().gpu("a100-80gb-sxm");
  EXPECT_STREQ(DeviceModel(a100, Precision::kFp32, false).matmul_dtype(), "fp32");
  EXPECT_STREQ(DeviceModel(a100, Precision::kFp32, false, {}, /*tf32=*/true).matmul_dtype(),
               "tf32");
  EXPECT_DOUBLE_EQ(DeviceModel(a100, Precision::kFp32, false, {}, true).peak_flops(),
                   a100.peak_tf32_tflops * 1e12);
  EXPECT_STREQ(DeviceModel(a100, Precision::kBf16, false, {}, true).matmul_dtype(), "bf16");
}

// Through the planner: HuggingFace's code is slower than the engine's, compiled code faster than
// eager, and nothing passes the matmul ceiling.
TEST(ModelCode, PlannedStepTimesOrderAsTheKernelsDo) {
  PlanOptions options = calibrated_plan_options(load_calibration(catalog()));
  const ModelSpec llama = [] {
    ModelSpec m = llama_like();
    m.recipe.global_batch = 16;
    return m;
  }();
  const Cluster cluster{{1, 8}, &catalog().gpu("h100-sxm")};
  const Configuration config{
      MethodSet{/*free_lunch=*/true, /*activation_checkpointing=*/false, Sharding::kZero3, false},
      /*micro_batch_size=*/2,
      /*grad_acc_steps=*/1};
  auto step_s = [&](ModelCode code, bool compiled) {
    PlanOptions o = options;
    o.implementation = {code, compiled};
    return plan_configuration(llama, cluster, config, o).step_time_s;
  };
  EXPECT_LT(step_s(ModelCode::kLlamaReference, true), step_s(ModelCode::kLlamaReference, false));
  EXPECT_LE(step_s(ModelCode::kEngine, true), step_s(ModelCode::kEngine, false));
  EXPECT_LT(step_s(ModelCode::kEngine, false), step_s(ModelCode::kLlamaReference, false));
}

// In the validation set, each of fms-fsdp's compiled runs is predicted faster than its eager twin,
// as published.
TEST(ModelCode, PublishedCompiledRunsArePredictedFasterThanEagerOnes) {
  const PlanOptions options = calibrated_plan_options(load_calibration(catalog()));
  ValidationOptions v;
  v.worst = 0;
  const ValidationReport report =
      validate(select_measurements(load_measurements(catalog()), {}), catalog(), options, v);
  int pairs = 0;
  for (const ValidationCase& eager : report.cases) {
    if (eager.source_id != "fms-fsdp-readme" || eager.name.find("-eager") == std::string::npos) {
      continue;
    }
    std::string twin = eager.name;
    twin.replace(twin.find("-eager"), 6, "-compile");
    for (const ValidationCase& compiled : report.cases) {
      if (compiled.source_id != eager.source_id || compiled.name != twin) continue;
      EXPECT_GT(compiled.predicted, eager.predicted) << twin;
      EXPECT_GT(compiled.published, eager.published) << twin;
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 8);
}

}  // namespace
}  // namespace gpudays
