// Selective checkpointing as published runs used it (plan/workload.h, CheckpointPolicy): a share
// of the blocks checkpointed (fms-fsdp), and torchtitan's per-op policy that keeps every other
// matmul's output and the attention's inside each checkpointed block. `plan` always checkpoints
// every block whole; these policies change only what validate plans for such a run.
#include <gtest/gtest.h>

#include <string>

#include "plan/device_model.h"
#include "plan/workload.h"
#include "plan/workload_summary.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

// A Llama 3-shaped model, small: grouped-query attention, SwiGLU; its micro-batch keeps the
// GPU, not the host's launches, the bound (these tests are about what is recomputed).
ModelSpec llama() {
  ModelSpec m = catalog().model("tinyllama-1.1b");
  m.arch.n_layers = 4;
  m.arch.seq_len = 2048;
  return m;
}

constexpr int64_t kMicroBatch = 8;

WorkloadOptions options(CheckpointPolicy policy) {
  WorkloadOptions o;
  o.micro_batch_size = kMicroBatch;
  o.fused_attention = true;
  o.implementation.code = ModelCode::kLlamaReference;
  o.implementation.checkpointing = policy;
  return o;
}

DeviceModel h100() {
  return DeviceModel(catalog().gpu("h100-sxm"), Precision::kBf16, /*free_lunch=*/true);
}

TEST(SelectiveCheckpointing, EveryBlockIsTheDefault) {
  const ModelSpec m = llama();
  const WorkloadSummary s = summarize(build_workload(m, options({})), h100());
  const Block& b = build_workload(m, options({})).blocks.front();
  EXPECT_DOUBLE_EQ(s.checkpointed_block_bytes, b.count * b.input_bytes);
  double device_s = 0.0, host_s = 0.0;
  for (const Op& op : b.ops) {
    device_s += h100().op_time_s(op, /*backward=*/false);
    host_s += h100().op_host_s(op, /*backward=*/false, /*python_forward=*/true);
  }
  ASSERT_GT(device_s, host_s) << "the test means a GPU-bound block";
  EXPECT_NEAR(s.recompute_s, b.count * device_s, 1e-12);
}

// A share p of the blocks: p of them keep their input, the rest all their activations; p of the
// blocks' forward is recomputed.
TEST(SelectiveCheckpointing, AShareOfTheBlocksKeepsAndRecomputesInProportion) {
  const ModelSpec m = llama();
  const WorkloadSummary all = summarize(build_workload(m, options({})), h100());
  const WorkloadSummary half = summarize(build_workload(m, options({0.5, false})), h100());
  EXPECT_NEAR(half.checkpointed_block_bytes,
              0.5 * all.checkpointed_block_bytes + 0.5 * all.block_saved_bytes,
              1e-6 * all.block_saved_bytes);
  EXPECT_NEAR(half.recompute_s, 0.5 * all.recompute_s, 1e-12);
  EXPECT_NEAR(half.recompute_flops, 0.5 * all.recompute_flops, 1e-6 * all.recompute_flops);
  EXPECT_DOUBLE_EQ(half.block_saved_bytes, all.block_saved_bytes);
  EXPECT_DOUBLE_EQ(half.forward_s, all.forward_s);
}

// torchtitan's per-op policy on Meta's code (wq, wk, wv, wo, w1, w3, w2 in call order): it keeps
// the outputs of wq, wv, w1 and w2, and the attention's output and log-sum-exp.
TEST(SelectiveCheckpointing, PerOpPolicyKeepsAlternateMatmulsAndTheAttention) {
  const ModelSpec m = llama();
  const Workload w = build_workload(m, options({1.0, true}));
  const Block& b = w.blocks.front();
  const auto& a = m.arch;
  const double n = static_cast<double>(kMicroBatch * a.seq_len), elt = 2.0;
  const double q = a.n_heads * a.attention_head_dim();
  const double kv = a.key_value_heads() * a.attention_head_dim();
  const double kept_matmuls = n * (q + kv + a.d_ffn + a.d_model) * elt;
  const double kept_attention = n * q * elt + kMicroBatch * a.n_heads * a.seq_len * 4.0;
  double kept = 0.0;
  for (const Op& op : b.ops) kept += op.policy_kept_bytes;
  EXPECT_NEAR(kept, kept_matmuls + kept_attention, 1e-6 * kept);

  const WorkloadSummary s = summarize(w, h100());
  EXPECT_NEAR(s.checkpointed_block_bytes, b.count * (b.input_bytes + kept), 1e-6 * kept);
  // Recomputed: less than the blocks' forward (the kept matmuls and the attention are not run
  // again), more than nothing (wk, wo, w3 and every pointwise operation are).
  const WorkloadSummary full = summarize(build_workload(m, options({})), h100());
  EXPECT_LT(s.recompute_s, 0.8 * full.recompute_s);
  EXPECT_GT(s.recompute_s, 0.2 * full.recompute_s);
  EXPECT_LT(s.recompute_flops, full.recompute_flops);
  // While a block is recomputed, the policy's kept outputs are not counted twice.
  EXPECT_NEAR(s.max_block_saved_bytes, full.max_block_saved_bytes - kept, 1e-6 * kept);
}

// Code that projects q, k and v in one GEMM counts it as one call (GPT-NeoX's query_key_value).
TEST(SelectiveCheckpointing, AFusedProjectionIsOneCall) {
  ModelSpec m = llama();
  WorkloadOptions o = options({1.0, true});
  o.implementation.code = ModelCode::kEngine;
  const Workload w = build_workload(m, o);
  for (const Op& op : w.blocks.front().ops) {
    const std::string name = op.name;
    if (name == "qkv" || name == "mlp_in") {
      EXPECT_DOUBLE_EQ(op.policy_kept_share, 1.0) << name;
    } else if (name == "attention_out" || name == "mlp_out") {
      EXPECT_DOUBLE_EQ(op.policy_kept_share, 0.0) << name;
    }
  }
}

// Without the policy no op keeps anything.
TEST(SelectiveCheckpointing, NoPolicyKeepsNothing) {
  const Workload w = build_workload(llama(), options({}));
  for (const Op& op : w.blocks.front().ops) {
    EXPECT_EQ(op.policy_kept_bytes, 0.0) << op.name;
    EXPECT_EQ(op.policy_kept_share, 0.0) << op.name;
  }
}

}  // namespace
}  // namespace gpudays
