// Collectives of the single-process engine (the Gloo engine's, on several ranks, are in
// gloo_communicator_test.cpp with the LibTorch tests).
#include <gtest/gtest.h>

#include <vector>

#include "distributed/communicator.h"

namespace gpudays {
namespace {

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

}  // namespace
}  // namespace gpudays
