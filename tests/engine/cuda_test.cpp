// GPU tests (named *_CUDA; each skips itself without a GPU or in a build without CUDA): the device
// API (memory statistics, TF32, name and driver), the tiny GPT-NeoX trained through the engine on
// CUDA against the same run on the CPU, bf16 autocast on CUDA, and single-rank NCCL collectives on
// device buffers; and, without a GPU, that the program's std::filesystem is libstdc++'s. They
// compile in every build: nothing here includes a CUDA header.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "catalog/model_loader.h"
#include "distributed/communicator.h"
#include "distributed/world.h"
#include "engine/apply_methods.h"
#include "engine/device.h"
#include "engine/engine.h"
#include "engine/trainable.h"
#include "models/zoo.h"

namespace gpudays {
namespace {

#define GPUDAYS_SKIP_WITHOUT_CUDA() \
  if (!cuda_available())            \
  GTEST_SKIP() << (cuda_built() ? "no CUDA GPU is visible" : "this build has no CUDA")

const c10::Device kCuda(c10::kCUDA, 0);

// The choice alone (no GPU needed): each of several ranks takes the GPU of its local rank; one
// rank the one asked for; a CUDA device always with its index; the CPU as it is.
TEST(Device, RankDeviceFollowsTheLocalRank) {
  const c10::Device cuda(c10::kCUDA);
  EXPECT_EQ(rank_device(cuda, /*several_ranks=*/true, /*local_rank=*/3, /*visible_gpus=*/8),
            c10::Device("cuda:3"));
  EXPECT_EQ(rank_device(c10::Device("cuda:1"), true, 0, 8), c10::Device("cuda:0"));
  EXPECT_EQ(rank_device(cuda, true, 3, 1), c10::Device("cuda:0"));  // each rank sees its own GPU
  EXPECT_EQ(rank_device(cuda, false, 3, 8), c10::Device("cuda:0"));
  EXPECT_EQ(rank_device(c10::Device("cuda:1"), false, 0, 8), c10::Device("cuda:1"));
  EXPECT_EQ(rank_device(c10::kCPU, true, 2, 0), c10::Device(c10::kCPU));
  use_device(c10::kCPU);  // nothing to do, and no CUDA needed
}

TEST(Cuda, DeviceDescribesItself_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  EXPECT_EQ(parse_device("cuda").type(), c10::kCUDA);
  EXPECT_FALSE(device_name(kCuda).empty());
  EXPECT_NE(driver_version(kCuda).find("CUDA "), std::string::npos) << driver_version(kCuda);
  EXPECT_GE(compute_capability(kCuda), 50);
  EXPECT_GT(device_memory(kCuda).total_bytes, int64_t{1} << 30);
}

TEST(Cuda, MemoryStatisticsFollowAnAllocation_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  synchronize(kCuda);
  reset_peak_memory(kCuda);
  const DeviceMemoryStats before = device_memory(kCuda);
  constexpr int64_t kBytes = int64_t{64} << 20;  // 16 Mi floats
  {
    const at::Tensor t = at::ones({kBytes / 4}, at::TensorOptions().device(kCuda));
    synchronize(kCuda);
    const DeviceMemoryStats during = device_memory(kCuda);
    EXPECT_GE(during.allocated_bytes - before.allocated_bytes, kBytes);
    EXPECT_GE(during.peak_allocated_bytes, before.allocated_bytes + kBytes);
    EXPECT_GE(during.reserved_bytes, during.allocated_bytes);
    EXPECT_EQ(during.total_bytes, before.total_bytes);
  }
  const DeviceMemoryStats after = device_memory(kCuda);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);  // freed into the cache
  EXPECT_GE(after.peak_allocated_bytes, before.allocated_bytes + kBytes);
  reset_peak_memory(kCuda);
  EXPECT_LT(device_memory(kCuda).peak_allocated_bytes, before.allocated_bytes + kBytes);
}

// TF32 keeps 10 mantissa bits in matmul inputs: on Ampere and newer its error against fp64 is
// orders of magnitude above fp32's (2^-11 vs 2^-24 relative per input), so the switch is visible.
TEST(Cuda, Tf32SwitchChangesMatmulPrecision_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  const bool saved = tf32_enabled();
  at::manual_seed(5);
  const at::Tensor a = at::randn({512, 512}, at::kDouble), b = at::randn({512, 512}, at::kDouble);
  const at::Tensor exact = at::matmul(a, b);
  auto error = [&](bool tf32) {
    set_tf32(tf32);
    EXPECT_EQ(tf32_enabled(), tf32);
    const at::Tensor c = at::matmul(a.to(kCuda, at::kFloat), b.to(kCuda, at::kFloat));
    return (c.cpu().to(at::kDouble) - exact).abs().max().item<double>();
  };
  const double fp32 = error(false);
  const double tf32 = error(true);
  set_tf32(saved);
  EXPECT_LT(fp32, 1e-3);
  if (compute_capability(kCuda) >= 80) {
    EXPECT_GT(tf32, 10 * fp32) << "fp32 " << fp32;
  }
}

// The tiny GPT-NeoX with the CPU run's initial weights, trained `steps` steps on `device` on the
// same batches (so that the loss falls where the model learns).
std::vector<double> train_tiny(const ModelSpec& spec, const c10::Device& device, int steps) {
  at::manual_seed(11);
  auto reference = make_trainable(spec, TrainableOptions{});  // initial weights drawn on the CPU
  TrainableOptions options;
  options.device = device;
  auto model = make_trainable(spec, options);
  {
    const at::NoGradGuard no_grad;
    const auto from = reference->parameters();
    const auto to = model->parameters();
    for (size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
  }
  auto comm = make_single_process_communicator();
  Engine engine(model->parameters(),
                *comm,
                apply_methods(Configuration{MethodSet{}, 4, 2}, spec.recipe, device).engine);
  // The same two micro-batches at every step, drawn on the CPU: the trainable's own synthetic
  // batches come from the device's generator, whose numbers differ between the CPU and CUDA.
  std::vector<models::Batch> batches;
  for (uint64_t i = 0; i < 2; ++i) {
    models::SyntheticOptions s;
    s.batch_size = 4;
    s.generator = at::make_generator<at::CPUGeneratorImpl>(1000 + i);
    batches.push_back(models::synthetic_batch(spec, s));
  }
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    const StepResult r = engine.step([&](int64_t i) { return model->batch_loss(batches[i]); });
    losses.push_back(r.loss);
  }
  return losses;
}

ModelSpec tiny_model(const std::string& name) {
  return load_model_file(std::string(GPUDAYS_MODEL_TEST_DATA_DIR) + "/" + name + ".toml");
}

ModelSpec tiny_gpt_neox() {
  return tiny_model("tiny-gpt-neox");
}

// Same weights, same batches (drawn on the CPU), fp32 without TF32: the first loss differs only by
// the summation order of cuBLAS against the CPU's kernels (fp32 rounding, ~1e-6 relative). Adam
// divides each gradient by its own running magnitude, so a rounding difference in a near-zero
// gradient can move that weight by up to one learning rate; over 5 steps of the tiny model this
// keeps the losses within 1e-4 relative (the CPU's fused-vs-plain attention test sees 1e-5 from the
// same effect).
TEST(Cuda, TinyGptNeoxTrainsAsOnTheCpu_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  const bool saved = tf32_enabled();
  set_tf32(false);
  const ModelSpec spec = tiny_gpt_neox();
  const std::vector<double> cpu = train_tiny(spec, c10::Device(c10::kCPU), 5);
  const std::vector<double> cuda = train_tiny(spec, kCuda, 5);
  set_tf32(saved);
  ASSERT_EQ(cuda.size(), cpu.size());
  EXPECT_NEAR(cuda[0], cpu[0], 1e-5 * cpu[0]);
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(cuda[i], cpu[i], 1e-4 * cpu[i]) << i;
  EXPECT_LT(cuda.back(), cuda.front());  // it trained
}

// The same for the tiny Llama (grouped-query attention, RMSNorm, SwiGLU).
TEST(Cuda, TinyLlamaTrainsAsOnTheCpu_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  const bool saved = tf32_enabled();
  set_tf32(false);
  const ModelSpec spec = tiny_model("tiny-llama");
  const std::vector<double> cpu = train_tiny(spec, c10::Device(c10::kCPU), 5);
  const std::vector<double> cuda = train_tiny(spec, kCuda, 5);
  set_tf32(saved);
  ASSERT_EQ(cuda.size(), cpu.size());
  EXPECT_NEAR(cuda[0], cpu[0], 1e-5 * cpu[0]);
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(cuda[i], cpu[i], 1e-4 * cpu[i]) << i;
  EXPECT_LT(cuda.back(), cuda.front());  // it trained
}

TEST(Cuda, Bf16AutocastTrainsOnCuda_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  const at::Tensor x = at::randn({8, 8}, at::TensorOptions().device(kCuda));
  {
    at::autocast::set_autocast_enabled(c10::kCUDA, true);
    at::autocast::set_autocast_dtype(c10::kCUDA, at::kBFloat16);
    EXPECT_EQ(at::matmul(x, x).scalar_type(), at::kBFloat16);
    at::autocast::set_autocast_enabled(c10::kCUDA, false);
    at::autocast::clear_cache();
  }
  ModelSpec spec = tiny_gpt_neox();
  const std::vector<double> fp32 = train_tiny(spec, kCuda, 3);
  spec.recipe.precision = Precision::kBf16;
  const std::vector<double> bf16 = train_tiny(spec, kCuda, 3);
  ASSERT_EQ(bf16.size(), 3u);
  // bf16 keeps 8 mantissa bits: the first loss within 2% of fp32's (same weights and batch).
  EXPECT_NEAR(bf16[0], fp32[0], 0.02 * fp32[0]);
  for (double loss : bf16) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_FALSE(at::autocast::is_autocast_enabled(c10::kCUDA));  // the engine restored it
}

// One rank of c10d's ProcessGroupNCCL: all_reduce and broadcast leave the buffer as it was,
// reduce_scatter and all_gather copy it; each on device buffers of every DType, read back on the
// current stream without a host synchronisation (c10d orders it after the collective), and host
// scalars staged through the device.
TEST(Cuda, NcclSingleRankCollectives_CUDA) {
  GPUDAYS_SKIP_WITHOUT_CUDA();
  if (!nccl_available()) GTEST_SKIP() << "this CUDA build has no NCCL";
  auto nccl = make_nccl_communicator(Rendezvous{}, /*cuda_device=*/0, WorldOptions{});
  EXPECT_EQ(nccl->engine(), "nccl");
  EXPECT_EQ(nccl->rank(), 0);
  EXPECT_EQ(nccl->size(), 1);
  const std::vector<std::pair<at::ScalarType, DType>> types = {{at::kFloat, DType::kFloat32},
                                                               {at::kDouble, DType::kFloat64},
                                                               {at::kHalf, DType::kFloat16},
                                                               {at::kBFloat16, DType::kBFloat16},
                                                               {at::kLong, DType::kInt64}};
  for (const auto& [scalar, dtype] : types) {
    const at::Tensor x = at::arange(1000, at::TensorOptions().device(kCuda)).to(scalar);
    at::Tensor buffer = x.clone();
    nccl->all_reduce(buffer.data_ptr(), buffer.numel(), dtype, ReduceOp::kSum);
    EXPECT_TRUE(at::equal(buffer, x)) << at::toString(scalar);
    nccl->all_reduce(buffer.data_ptr(), buffer.numel(), dtype, ReduceOp::kMax);
    EXPECT_TRUE(at::equal(buffer, x)) << at::toString(scalar);
    nccl->broadcast(buffer.data_ptr(), buffer.numel(), dtype, /*root=*/0);
    EXPECT_TRUE(at::equal(buffer, x)) << at::toString(scalar);
    at::Tensor shard = at::zeros_like(x);
    nccl->reduce_scatter(x.data_ptr(), shard.data_ptr(), x.numel(), dtype, ReduceOp::kSum);
    EXPECT_TRUE(at::equal(shard, x)) << at::toString(scalar);
    at::Tensor gathered = at::zeros_like(x);
    nccl->all_gather(x.data_ptr(), gathered.data_ptr(), x.numel(), dtype);
    EXPECT_TRUE(at::equal(gathered, x)) << at::toString(scalar);
  }
  float host = 2.5f;  // the engine's overflow flag and norms are host scalars
  nccl->all_reduce(&host, 1, DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(host, 2.5f);
  double norm = 3.25;
  nccl->all_reduce(&norm, 1, DType::kFloat64, ReduceOp::kMax);
  EXPECT_EQ(norm, 3.25);
  int64_t held[2] = {7, 9};
  nccl->all_reduce(held, 2, DType::kInt64, ReduceOp::kSum);
  EXPECT_EQ(held[0], 7);
  EXPECT_EQ(held[1], 9);
  nccl->barrier();
}

// The link of every build (no GPU needed; named *_CUDA so that the CUDA variant's run, make
// test-cuda, includes it): the program's std::filesystem is the standard library's. The torch
// wheel's libtorch.so and libtorch_cpu.so export copies of their own; linked ahead of libstdc++,
// libtorch.so's took every call of the program and crashed in remove_all on the GPU machine
// (cmake/torch.cmake).
TEST(Linking, StdFilesystemIsTheStandardLibrarys_CUDA) {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&);
  const RemoveAll bound = &std::filesystem::remove_all;  // the definition the loader bound
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(bound), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  EXPECT_NE(std::string(info.dli_fname).find("libstdc++"), std::string::npos) << info.dli_fname;
}

}  // namespace
}  // namespace gpudays
