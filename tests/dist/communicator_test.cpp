// Collectives: the single-process engine everywhere; the MPI engine when this binary runs under
// mpirun with 2 or 4 ranks (tests named Mpi*, registered in tests/CMakeLists.txt); and a rank that
// dies makes the whole job exit with an error instead of hanging.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "bench/child_process.h"
#include "dist/communicator.h"
#include "dist/half.h"

namespace gpudays {
namespace {

TEST(Half, RoundTripsAndRounds) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604645e-08f, 3.140625f}) {
    EXPECT_EQ(fp16_to_float(float_to_fp16(f)), f) << f;
    EXPECT_EQ(bf16_to_float(float_to_bf16(f)), bf16_to_float(float_to_bf16(f)));
  }
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_fp16(1e6f), 0x7c00);                // overflow to infinity
  EXPECT_EQ(float_to_fp16(1.0f + 1.0f / 4096), 0x3c00);  // rounds to nearest even
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

TEST(SingleProcess, CollectivesAreIdentities) {
  auto comm = make_single_process_communicator();
  EXPECT_EQ(comm->size(), 1);
  std::vector<float> a = {1, 2, 3};
  comm->all_reduce(a.data(), a.size(), DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(a, (std::vector<float>{1, 2, 3}));
  std::vector<float> b(3);
  comm->all_gather(a.data(), b.data(), 3, DType::kFloat32);
  EXPECT_EQ(b, a);
}

// --- Run under mpirun -np N (skipped otherwise). ---

std::unique_ptr<Communicator> world_or_skip() {
  if (!launched_with_several_ranks() || !mpi_available()) return nullptr;
  return make_mpi_communicator();
}

TEST(Mpi, AllReduceSumsEveryDtype) {
  auto comm = world_or_skip();
  if (!comm) GTEST_SKIP() << "not under mpirun";
  const int n = comm->size(), r = comm->rank();
  std::vector<float> f32(100);
  std::vector<double> f64(100);
  std::vector<uint16_t> f16(100), b16(100);
  for (int i = 0; i < 100; ++i) {
    f32[i] = static_cast<float>(r + i);
    f64[i] = r + i;
    f16[i] = float_to_fp16(static_cast<float>(r + i % 10));
    b16[i] = float_to_bf16(static_cast<float>(r + i % 10));
  }
  comm->all_reduce(f32.data(), 100, DType::kFloat32, ReduceOp::kSum);
  comm->all_reduce(f64.data(), 100, DType::kFloat64, ReduceOp::kSum);
  comm->all_reduce(f16.data(), 100, DType::kFloat16, ReduceOp::kSum);
  comm->all_reduce(b16.data(), 100, DType::kBFloat16, ReduceOp::kSum);
  for (int i = 0; i < 100; ++i) {
    const double expected = n * i + n * (n - 1) / 2.0;
    const double expected_small = n * (i % 10) + n * (n - 1) / 2.0;
    EXPECT_EQ(f32[i], expected);
    EXPECT_EQ(f64[i], expected);
    EXPECT_EQ(fp16_to_float(f16[i]), expected_small);
    EXPECT_EQ(bf16_to_float(b16[i]), expected_small);
  }
}

TEST(Mpi, ReduceScatterAllGatherBroadcastMax) {
  auto comm = world_or_skip();
  if (!comm) GTEST_SKIP() << "not under mpirun";
  const int n = comm->size(), r = comm->rank();
  const int block = 5;
  std::vector<float> send(n * block), recv(block);
  for (int i = 0; i < n * block; ++i) send[i] = static_cast<float>((r + 1) * i);
  comm->reduce_scatter(send.data(), recv.data(), block, DType::kFloat32, ReduceOp::kSum);
  const float ranks_sum = n * (n + 1) / 2.0f;
  for (int j = 0; j < block; ++j) EXPECT_EQ(recv[j], ranks_sum * (r * block + j));

  std::vector<int64_t> mine(block, r), all(n * block);
  comm->all_gather(mine.data(), all.data(), block, DType::kInt64);
  for (int i = 0; i < n * block; ++i) EXPECT_EQ(all[i], i / block);

  std::vector<float> value = {static_cast<float>(r * 10)};
  comm->broadcast(value.data(), 1, DType::kFloat32, /*root=*/n - 1);
  EXPECT_EQ(value[0], (n - 1) * 10.0f);

  std::vector<float> peak = {static_cast<float>(r)};
  comm->all_reduce(peak.data(), 1, DType::kFloat32, ReduceOp::kMax);
  EXPECT_EQ(peak[0], n - 1.0f);
  comm->barrier();
}

// Under mpirun with GPUDAYS_TEST_DIE_RANK=k: rank k dies before a collective the others wait in.
TEST(MpiDeath, ARankDiesBeforeACollective) {
  const char* die = std::getenv("GPUDAYS_TEST_DIE_RANK");
  if (die == nullptr) GTEST_SKIP() << "only as a child of RankDeathEndsTheJob";
  auto comm = make_mpi_communicator();
  if (comm->rank() == std::atoi(die)) std::abort();
  float x = 1.0f;
  comm->all_reduce(&x, 1, DType::kFloat32, ReduceOp::kSum);
}

TEST(MpiLauncher, RankDeathEndsTheJobWithinBoundedTime) {
#ifndef GPUDAYS_MPIEXEC
  GTEST_SKIP() << "built without MPI";
#else
  if (launched_with_several_ranks()) GTEST_SKIP() << "runs mpirun itself";
  setenv("GPUDAYS_TEST_DIE_RANK", "1", 1);
  const ChildResult r = run_child({GPUDAYS_MPIEXEC,
                                   "--allow-run-as-root",
                                   "--oversubscribe",
                                   "-np",
                                   "2",
                                   GPUDAYS_TEST_BINARY,
                                   "--gtest_filter=MpiDeath.*"},
                                  ChildOptions{60.0, ""});
  unsetenv("GPUDAYS_TEST_DIE_RANK");
  EXPECT_FALSE(r.timed_out) << "the surviving rank hung";
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.wall_s, 60.0);
#endif
}

}  // namespace
}  // namespace gpudays
