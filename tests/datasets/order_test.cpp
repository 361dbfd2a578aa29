// The held-out split, the seeded global order and the rank slices (data/samples.h): the order
// depends on (seed, samples, epoch) alone, and the union of the ranks' micro-batches is the
// global batch whatever the number of ranks or the micro-batch size.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/error.h"
#include "data/samples.h"

namespace gpudays::data {
namespace {

TEST(DataOrder, EpochOrderIsAPermutationFixedBySeedAndEpoch) {
  const auto order = epoch_order(1000, /*seed=*/7, /*epoch=*/0);
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(order, epoch_order(1000, 7, 0));
  EXPECT_NE(order, epoch_order(1000, 8, 0));
  EXPECT_NE(order, epoch_order(1000, 7, 1));
  auto identity = sorted;
  EXPECT_NE(order, identity);
}

TEST(DataOrder, EpochOrderIsTheSameOnEveryMachine) {
  // Pinned values: a change of generator or of its seeding would change every run's order.
  EXPECT_EQ(epoch_order(10, /*seed=*/1234, /*epoch=*/0),
            (std::vector<int64_t>{8, 3, 7, 9, 0, 4, 2, 1, 5, 6}));
  EXPECT_EQ(epoch_order(10, /*seed=*/1234, /*epoch=*/1),
            (std::vector<int64_t>{4, 2, 5, 1, 9, 7, 8, 0, 6, 3}));
  // Each position is roughly uniform over many seeds (no position favours a sample).
  std::vector<int> first_counts(10, 0);
  for (uint64_t seed = 0; seed < 5000; ++seed) ++first_counts[epoch_order(10, seed, 0)[0]];
  for (int count : first_counts) EXPECT_NEAR(count, 500, 100);
}

// The permutation holds nothing per sample: an epoch of the Pythia data's size (146M samples of
// 2,049 tokens; 1.2 GB per rank as a table) or far beyond is a few words, and a position of it is
// computed at once.
TEST(DataOrder, OrderIsComputedInConstantMemory) {
  EXPECT_LE(sizeof(SampleOrder), 128u);
  const int64_t huge = int64_t{1} << 40;
  SampleOrder order(huge, /*seed=*/1234);
  std::set<int64_t> seen;
  for (int64_t p = 0; p < 1000; ++p) {
    const int64_t s = order.at(p);
    EXPECT_GE(s, 0);
    EXPECT_LT(s, huge);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
  const EpochPermutation pythia(146'000'000, /*seed=*/1234, /*epoch=*/0);
  EXPECT_LT(pythia.at(145'999'999), 146'000'000);
}

// Every size from 1 to 300 (and some odd large ones): a permutation of [0, size).
TEST(DataOrder, EveryEpochSizeIsAPermutation) {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 300; ++n) sizes.push_back(n);
  for (int64_t n : {1023, 1024, 1025, 4097, 65537, 100003}) sizes.push_back(n);
  for (int64_t n : sizes) {
    std::vector<char> hit(static_cast<size_t>(n), 0);
    const EpochPermutation permutation(n, /*seed=*/n * 31, /*epoch=*/2);
    for (int64_t p = 0; p < n; ++p) {
      const int64_t s = permutation.at(p);
      ASSERT_TRUE(s >= 0 && s < n) << n;
      ASSERT_EQ(hit[static_cast<size_t>(s)], 0) << "size " << n << ": " << s << " twice";
      hit[static_cast<size_t>(s)] = 1;
    }
  }
}

// Over one epoch the ranks' slices of every step read disjoint samples that together are the
// whole training set, for every world size that divides the batch.
TEST(DataOrder, RanksSlicesAreDisjointAndCoverTheEpoch) {
  const int64_t train = 960, global_batch = 48;
  for (int world : {1, 2, 3, 4, 8, 16}) {
    std::vector<int> reads(train, 0);
    for (int rank = 0; rank < world; ++rank) {
      SampleOrder order(train, /*seed=*/5);
      const RankSlice slice = rank_slice(global_batch, rank, world);
      for (int64_t step = 0; step < train / global_batch; ++step)
        for (int64_t i = 0; i < slice.count; ++i)
          ++reads[static_cast<size_t>(order.at(step * global_batch + slice.first + i))];
    }
    for (int64_t s = 0; s < train; ++s)
      EXPECT_EQ(reads[s], 1) << "world " << world << " sample " << s;
  }
}

TEST(DataOrder, SampleOrderWalksEpochsInSequence) {
  SampleOrder order(/*train_samples=*/50, /*seed=*/3);
  const auto epoch0 = epoch_order(50, 3, 0);
  const auto epoch2 = epoch_order(50, 3, 2);
  for (int64_t p = 0; p < 50; ++p) EXPECT_EQ(order.at(p), epoch0[p]);
  for (int64_t p = 100; p < 150; ++p) EXPECT_EQ(order.at(p), epoch2[p - 100]);
  EXPECT_EQ(order.at(3), epoch0[3]);  // going back recomputes
}

// Property: for every world size and micro-batch size that divide the global batch, the samples
// each rank reads at step k, micro-batch by micro-batch, add up to the same global batch in the
// same positions.
TEST(DataOrder, StepSeesTheSameGlobalBatchWhateverRanksAndMicroBatch) {
  const int64_t train = 997, global_batch = 48;
  for (int64_t step : {0, 5, 20, 41}) {
    SampleOrder reference(train, 11);
    std::vector<int64_t> expected;
    for (int64_t p = 0; p < global_batch; ++p)
      expected.push_back(reference.at(step * global_batch + p));
    for (int world : {1, 2, 3, 4, 6, 8, 16}) {
      const int64_t per_rank = global_batch / world;
      for (int64_t micro : {int64_t{1}, int64_t{2}, int64_t{3}, per_rank}) {
        if (per_rank % micro != 0) continue;
        std::vector<int64_t> seen(global_batch, -1);
        for (int rank = 0; rank < world; ++rank) {
          SampleOrder order(train, 11);  // each rank has its own
          const RankSlice slice = rank_slice(global_batch, rank, world);
          for (int64_t m = 0; m < slice.count / micro; ++m)
            for (int64_t i = 0; i < micro; ++i) {
              const int64_t position = slice.first + m * micro + i;
              seen[position] = order.at(step * global_batch + position);
            }
        }
        EXPECT_EQ(seen, expected) << "world " << world << " micro " << micro;
      }
    }
  }
}

TEST(DataOrder, RankSlicesAreContiguousAndCoverTheBatch) {
  std::set<int64_t> covered;
  for (int rank = 0; rank < 4; ++rank) {
    const RankSlice slice = rank_slice(32, rank, 4);
    EXPECT_EQ(slice.count, 8);
    EXPECT_EQ(slice.first, 8 * rank);
    for (int64_t i = 0; i < slice.count; ++i) covered.insert(slice.first + i);
  }
  EXPECT_EQ(covered.size(), 32u);
  EXPECT_THROW(rank_slice(30, 0, 4), InputError);
  EXPECT_THROW(rank_slice(32, 4, 4), InputError);
  EXPECT_THROW(rank_slice(32, 0, 0), InputError);
}

TEST(DataOrder, SplitHoldsOutTheTailAndAtLeastOneSample) {
  EXPECT_EQ(split_samples(1000, 0.01).eval_samples, 10);
  EXPECT_EQ(split_samples(1000, 0.01).train_samples, 990);
  EXPECT_EQ(split_samples(10, 0.01).eval_samples, 1);
  EXPECT_EQ(split_samples(2, 0.9).eval_samples, 1);
  EXPECT_EQ(split_samples(1, 0.5).eval_samples, 0);
  EXPECT_EQ(split_samples(100, 0.0).eval_samples, 0);
  EXPECT_THROW(split_samples(100, 1.0), InputError);
  EXPECT_THROW(split_samples(100, -0.1), InputError);
  // The training order never visits a held-out sample.
  const Split split = split_samples(200, 0.1);
  for (int64_t s : epoch_order(split.train_samples, 5, 0)) EXPECT_LT(s, split.train_samples);
}

}  // namespace
}  // namespace gpudays::data
