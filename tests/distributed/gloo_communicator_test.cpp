// The Gloo engine over c10d: every collective on every dtype when this binary runs under mpirun
// with 2 or 4 ranks (Gloo.*, registered in tests/CMakeLists.txt; skipped in a plain run), and
// failures that end the job in bounded time with the failing rank named: a rank that exits before
// a collective, and one that sleeps past the collective timeout (GlooFailure.*, which start
// mpirun themselves). One rank gets the single-process communicator.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "common/child_process.h"
#include "distributed/c10d/ledger.h"
#include "distributed/world.h"

namespace gpudays {
namespace {

std::unique_ptr<Communicator> world_or_null() {
  if (!launched_with_several_ranks()) return nullptr;
  return make_communicator(RankDevice::kCpu, /*cuda_device=*/0);
}

template <typename T>
std::vector<T> values(int rank, int n) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<float>(rank + i % 10));
  return v;
}

TEST(Gloo, AllReduceSumsAndMaxesEveryDtype) {
  auto comm = world_or_null();
  if (!comm) GTEST_SKIP() << "not under mpirun";
  EXPECT_EQ(comm->engine(), "gloo");
  const int n = comm->size(), r = comm->rank(), count = 100;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
    auto f32 = values<float>(r, count);
    auto f64 = values<double>(r, count);
    auto f16 = values<c10::Half>(r, count);
    auto b16 = values<c10::BFloat16>(r, count);
    auto i64 = values<int64_t>(r, count);
    comm->all_reduce(f32.data(), count, DType::kFloat32, op);
    comm->all_reduce(f64.data(), count, DType::kFloat64, op);
    comm->all_reduce(f16.data(), count, DType::kFloat16, op);
    comm->all_reduce(b16.data(), count, DType::kBFloat16, op);
    comm->all_reduce(i64.data(), count, DType::kInt64, op);
    for (int i = 0; i < count; ++i) {
      const double expected =
          op == ReduceOp::kSum ? n * (i % 10) + n * (n - 1) / 2.0 : (n - 1) + i % 10;
      EXPECT_EQ(f32[i], expected);
      EXPECT_EQ(f64[i], expected);
      EXPECT_EQ(static_cast<float>(f16[i]), expected);
      EXPECT_EQ(static_cast<float>(b16[i]), expected);
      EXPECT_EQ(i64[i], expected);
    }
  }
}

TEST(Gloo, ReduceScatterAllGatherBroadcastBarrier) {
  auto comm = world_or_null();
  if (!comm) GTEST_SKIP() << "not under mpirun";
  const int n = comm->size(), r = comm->rank(), block = 5;
  std::vector<float> send(n * block), recv(block);
  for (int i = 0; i < n * block; ++i) send[i] = static_cast<float>((r + 1) * i);
  comm->reduce_scatter(send.data(), recv.data(), block, DType::kFloat32, ReduceOp::kSum);
  const float ranks_sum = n * (n + 1) / 2.0f;
  for (int j = 0; j < block; ++j) EXPECT_EQ(recv[j], ranks_sum * (r * block + j));

  std::vector<c10::BFloat16> half_send(n * block, c10::BFloat16(1.0f)), half_recv(block);
  comm->reduce_scatter(half_send.data(), half_recv.data(), block, DType::kBFloat16, ReduceOp::kSum);
  for (int j = 0; j < block; ++j) EXPECT_EQ(static_cast<float>(half_recv[j]), n);

  std::vector<int64_t> mine(block, r), all(n * block);
  comm->all_gather(mine.data(), all.data(), block, DType::kInt64);
  for (int i = 0; i < n * block; ++i) EXPECT_EQ(all[i], i / block);

  std::vector<c10::Half> mine16(block, c10::Half(static_cast<float>(r))), all16(n * block);
  comm->all_gather(mine16.data(), all16.data(), block, DType::kFloat16);
  for (int i = 0; i < n * block; ++i) EXPECT_EQ(static_cast<float>(all16[i]), i / block);

  std::vector<double> value = {r * 10.0, r * 20.0};
  comm->broadcast(value.data(), 2, DType::kFloat64, /*root=*/n - 1);
  EXPECT_EQ(value, (std::vector<double>{(n - 1) * 10.0, (n - 1) * 20.0}));
  comm->barrier();
}

// Under mpirun with GPUDAYS_TEST_FAILURE=exit|sleep: rank n-1 exits (cleanly) or sleeps past the
// timeout before the second collective, which the other ranks wait in.
TEST(GlooFailureChild, ARankMissesACollective) {
  const char* failure = std::getenv("GPUDAYS_TEST_FAILURE");
  if (failure == nullptr) GTEST_SKIP() << "only as a child of GlooFailure.*";
  WorldOptions options;
  options.collective_timeout_s = 3;
  auto comm = make_communicator(RankDevice::kCpu, /*cuda_device=*/0, options);
  float x = 1.0f;
  comm->all_reduce(&x, 1, DType::kFloat32, ReduceOp::kSum);
  if (comm->rank() == comm->size() - 1) {
    if (std::string(failure) == "exit") std::_Exit(0);
    sleep(60);
  }
  comm->all_reduce(&x, 1, DType::kFloat32, ReduceOp::kSum);
}

ChildResult run_failing_job(const char* failure, int ranks) {
  setenv("GPUDAYS_TEST_FAILURE", failure, /*overwrite=*/1);
  const ChildResult r = run_child({GPUDAYS_MPIEXEC,
                                   "--allow-run-as-root",
                                   "--oversubscribe",
                                   "-np",
                                   std::to_string(ranks),
                                   GPUDAYS_TEST_BINARY,
                                   "--gtest_filter=GlooFailureChild.*"},
                                  ChildOptions{60.0, ""});
  unsetenv("GPUDAYS_TEST_FAILURE");
  return r;
}

TEST(GlooFailure, ARankThatExitsEndsTheJobNamingIt) {
#ifndef GPUDAYS_MPIEXEC
  GTEST_SKIP() << "no mpirun";
#else
  if (launched_with_several_ranks()) GTEST_SKIP() << "runs mpirun itself";
  const ChildResult r = run_failing_job("exit", 2);
  EXPECT_FALSE(r.timed_out) << "the surviving rank hung";
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.wall_s, 30.0);
  EXPECT_NE((r.out + r.err).find("rank 1 (at 1) did not reach it"), std::string::npos)
      << r.out << r.err;
#endif
}

TEST(GlooFailure, ARankThatSleepsPastTheTimeoutEndsTheJobNamingIt) {
#ifndef GPUDAYS_MPIEXEC
  GTEST_SKIP() << "no mpirun";
#else
  if (launched_with_several_ranks()) GTEST_SKIP() << "runs mpirun itself";
  const ChildResult r = run_failing_job("sleep", 3);
  EXPECT_FALSE(r.timed_out) << "the job hung";
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.wall_s, 30.0);  // the 3 s timeout, not the 60 s sleep
  EXPECT_NE((r.out + r.err).find("rank 2 (at 1) did not reach it"), std::string::npos)
      << r.out << r.err;
#endif
}

TEST(GlooWorld, OneRankGetsTheSingleProcessCommunicator) {
  if (launched_with_several_ranks()) GTEST_SKIP() << "a plain run only";
  for (RankDevice device : {RankDevice::kCpu, RankDevice::kCuda}) {
    const auto comm = make_communicator(device, /*cuda_device=*/0);
    EXPECT_EQ(comm->engine(), "single");
    EXPECT_EQ(comm->size(), 1);
  }
}

// A collective that runs out of memory (staging a buffer on a full GPU) is the trial's
// out-of-memory result, passed on unchanged; any other failure becomes the ledger's one line.
TEST(CollectiveLedger, PassesOutOfMemoryThroughUnchanged) {
  if (launched_with_several_ranks()) GTEST_SKIP() << "a plain run only";
  CollectiveLedger ledger(c10::make_intrusive<c10d::HashStore>(), /*rank=*/0, /*size=*/1, "Gloo");
  const auto no_wait = [](const c10::intrusive_ptr<c10d::Work>&) {};
  EXPECT_THROW(ledger.run(
                   "all_reduce",
                   []() -> c10::intrusive_ptr<c10d::Work> {
                     TORCH_CHECK_WITH(OutOfMemoryError, false, "CUDA out of memory");
                   },
                   no_wait),
               c10::OutOfMemoryError);
  try {
    ledger.run(
        "broadcast",
        []() -> c10::intrusive_ptr<c10d::Work> { throw std::runtime_error("connection reset"); },
        no_wait);
    FAIL() << "no exception";
  } catch (const c10::OutOfMemoryError&) {
    FAIL() << "not an out-of-memory error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("broadcast (collective 2) failed on rank 0 of 1", 0), 0u) << what;
    EXPECT_NE(what.find("Gloo: connection reset"), std::string::npos) << what;
  }
}

// In the background mode (NCCL's) no collective waits for the store: the count still reaches it,
// within a publishing period, and a failure names the collective as before.
TEST(CollectiveLedger, PublishesInTheBackgroundWithoutAStoreRoundTripPerCollective) {
  if (launched_with_several_ranks()) GTEST_SKIP() << "a plain run only";
  auto store = c10::make_intrusive<c10d::HashStore>();
  CollectiveLedger ledger(store, /*rank=*/0, /*size=*/1, "NCCL", LedgerPublish::kInBackground);
  const auto done = [] { return c10::make_intrusive<c10d::Work>(); };
  const auto no_wait = [](const c10::intrusive_ptr<c10d::Work>&) {};
  for (int i = 0; i < 3; ++i) ledger.run("all_reduce", done, no_wait);
  const auto published = [&] {
    const std::vector<uint8_t> v = store->get("gpudays/collectives/0");
    return std::string(v.begin(), v.end());
  };
  for (int tries = 0; tries < 100 && published() != "3"; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(published(), "3");
  try {
    ledger.run(
        "all_gather",
        []() -> c10::intrusive_ptr<c10d::Work> { throw std::runtime_error("watchdog timeout"); },
        no_wait);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("all_gather (collective 4) failed on rank 0 of 1"), std::string::npos);
    EXPECT_NE(what.find("every rank reached it"), std::string::npos) << what;  // itself included
  }
  EXPECT_TRUE(ledger.failed());
}

}  // namespace
}  // namespace gpudays
