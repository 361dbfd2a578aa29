// mamba-ssm's fast path (plan/workload.h, ModelCode::kMambaSsm): the same mathematics as the
// engine's Mamba in fewer, fused kernels that keep less for backward and recompute the conv
// output and delta there.
#include <gtest/gtest.h>

#include <string>

#include "plan/device_model.h"
#include "plan/workload.h"
#include "plan/workload_summary.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

ModelSpec mamba() {
  ModelSpec m = catalog().model("mamba");
  m.arch.n_layers = 2;
  m.arch.seq_len = 4096;
  return m;
}

Workload workload(ModelCode code, bool fast_scan = true) {
  WorkloadOptions o;
  o.micro_batch_size = 2;
  o.fast_scan = fast_scan;
  o.implementation.code = code;
  return build_workload(mamba(), o);
}

double block_saved(const Workload& w) {
  double saved = 0.0;
  for (const Op& op : w.blocks.front().ops) saved += op.saved_bytes;
  return saved;
}

const Op& find(const Workload& w, const std::string& name) {
  for (const Op& op : w.blocks.front().ops) {
    if (name == op.name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  return w.blocks.front().ops.front();
}

TEST(MambaSsm, SameModelFlopsAsTheEngine) {
  const Workload fused = workload(ModelCode::kMambaSsm);
  const Workload engine = workload(ModelCode::kEngine);
  EXPECT_NEAR(sum_model_flops(fused.blocks.front().ops),
              sum_model_flops(engine.blocks.front().ops),
              1e-9 * sum_model_flops(engine.blocks.front().ops));
  EXPECT_DOUBLE_EQ(sum_model_flops(fused.head_ops), sum_model_flops(engine.head_ops));
}

// MambaInnerFn keeps xz, x_proj's output, B, C and the scan's output (plus one state per 2,048
// tokens); the fused norm keeps the fp32 residual; in_proj its input: about 18 d bytes per token
// in bf16 for expand 2, against the engine's materialised conv, SiLU, softplus and gate outputs.
TEST(MambaSsm, KeepsWhatMambaInnerFnKeeps) {
  const ModelSpec m = mamba();
  const double n = 2.0 * m.arch.seq_len, d = m.arch.d_model, e = m.arch.expand * d;
  const double state = m.arch.d_state, rank = m.arch.dt_rank, elt = 2.0;
  const double expected = n * d * 4.0 + n * 4.0                 // fp32 residual, rstd
                          + n * d * elt + n * 2.0 * e * elt     // in_proj's input, xz
                          + n * (rank + 2.0 * state) * elt      // x_dbl
                          + 2.0 * n * state * elt               // B, C
                          + n * e * elt                         // the scan's output
                          + 2.0 * e * 2.0 * 2.0 * state * 4.0;  // 2 chunks of states, 2 samples
  const Workload fused = workload(ModelCode::kMambaSsm);
  EXPECT_NEAR(block_saved(fused), expected, 1e-9 * expected);
  EXPECT_LT(block_saved(fused), 0.75 * block_saved(workload(ModelCode::kEngine)));
}

TEST(MambaSsm, RecomputesTheConvAndDeltaInBackward) {
  const Workload fused = workload(ModelCode::kMambaSsm);
  EXPECT_DOUBLE_EQ(find(fused, "causal_conv1d_silu").backward_factor, 3.0);
  EXPECT_DOUBLE_EQ(find(fused, "dt_proj").backward_factor, 3.0);
  EXPECT_EQ(find(fused, "selective_scan_cuda").cls, OpClass::kVector);
  // The head's loss keeps only the logits (flash-attn's in-place cross-entropy).
  EXPECT_EQ(std::string(fused.head_ops.back().name), "inplace_cross_entropy");
}

// On a GPU the CUDA scan runs at its own fraction of the FP32 peak; the host CPU's fused kernel
// keeps the measured one.
TEST(MambaSsm, TheCudaScanRunsAtItsOwnEfficiency) {
  const Workload fused = workload(ModelCode::kMambaSsm);
  const Op& scan = find(fused, "selective_scan_cuda");
  const GpuSpec& a100 = catalog().gpu("a100-80gb-sxm");
  DeviceModelConstants c;
  const DeviceModel device(a100, Precision::kBf16, /*free_lunch=*/true, c);
  const double compute_s =
      scan.exec_flops / (a100.peak_fp32_tflops * 1e12 * c.cuda_scan_efficiency);
  EXPECT_NEAR(device.op_time_s(scan, /*backward=*/false), compute_s, 1e-12);
  c.cuda_scan_efficiency /= 2.0;
  const DeviceModel slower(a100, Precision::kBf16, /*free_lunch=*/true, c);
  EXPECT_NEAR(slower.op_time_s(scan, false), 2.0 * compute_s, 1e-12);
}

}  // namespace
}  // namespace gpudays
