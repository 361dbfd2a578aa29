// The pure functions of samples.h: the held-out split, the seeded global order and the rank
// slices. The order is a keyed Feistel permutation computed position by position (nothing held
// per sample), from integer arithmetic alone (no <random> distributions, whose results differ
// between standard libraries): an order is the same on every machine.
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "data/samples.h"

namespace gpudays::data {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Split split_samples(int64_t num_samples, double eval_fraction) {
  if (num_samples < 0) throw InputError(fmt::format("{} samples", num_samples));
  if (!(eval_fraction >= 0.0 && eval_fraction < 1.0))
    throw InputError(fmt::format("evaluation fraction {} must lie in [0, 1)", eval_fraction));
  int64_t eval = 0;
  if (eval_fraction > 0.0 && num_samples >= 2) {
    eval = static_cast<int64_t>(std::floor(static_cast<double>(num_samples) * eval_fraction));
    eval = std::min(std::max<int64_t>(eval, 1), num_samples - 1);
  }
  return {num_samples - eval, eval};
}

EpochPermutation::EpochPermutation(int64_t size, uint64_t seed, int64_t epoch) : size_(size) {
  if (size < 0 || epoch < 0)
    throw InputError(fmt::format("no order of {} samples in epoch {}", size, epoch));
  while (half_bits_ < 31 && (uint64_t{1} << (2 * half_bits_)) < static_cast<uint64_t>(size)) {
    ++half_bits_;
  }
  uint64_t state = seed;
  state = splitmix64(state) ^ (static_cast<uint64_t>(epoch) * 0xD1B54A32D192ED03ull);
  for (uint64_t& key : keys_) key = splitmix64(state);
}

// One pass of a balanced Feistel network over [0, 4^half_bits): a bijection of that domain
// (Luby and Rackoff, "How to construct pseudorandom permutations from pseudorandom functions",
// SIAM J. Comput. 1988), the round function a splitmix64 finaliser keyed per round.
uint64_t EpochPermutation::feistel(uint64_t x) const {
  const uint64_t mask = (uint64_t{1} << half_bits_) - 1;
  uint64_t left = x >> half_bits_, right = x & mask;
  for (const uint64_t key : keys_) {
    uint64_t mixed = right ^ key;
    const uint64_t round = splitmix64(mixed) & mask;
    const uint64_t next = left ^ round;
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

int64_t EpochPermutation::at(int64_t position) const {
  if (position < 0 || position >= size_)
    throw InputError(fmt::format("position {} outside an epoch of {} samples", position, size_));
  // Cycle walking (Black and Rogaway, "Ciphers with arbitrary finite domains", CT-RSA 2002): the
  // domain is below 4 x size, so fewer than 4 passes on average; the walk stays a bijection.
  uint64_t x = static_cast<uint64_t>(position);
  do {
    x = feistel(x);
  } while (x >= static_cast<uint64_t>(size_));
  return static_cast<int64_t>(x);
}

std::vector<int64_t> epoch_order(int64_t train_samples, uint64_t seed, int64_t epoch) {
  const EpochPermutation permutation(train_samples, seed, epoch);
  std::vector<int64_t> order(static_cast<size_t>(train_samples));
  for (int64_t i = 0; i < train_samples; ++i) order[static_cast<size_t>(i)] = permutation.at(i);
  return order;
}

SampleOrder::SampleOrder(int64_t train_samples, uint64_t seed)
    : train_samples_(train_samples), seed_(seed), permutation_(0, seed, 0) {
  if (train_samples < 1) throw InputError("no training samples to order");
}

int64_t SampleOrder::at(int64_t position) {
  if (position < 0) throw InputError(fmt::format("negative sample position {}", position));
  const int64_t epoch = position / train_samples_;
  if (epoch != epoch_) {
    permutation_ = EpochPermutation(train_samples_, seed_, epoch);
    epoch_ = epoch;
  }
  return permutation_.at(position % train_samples_);
}

RankSlice rank_slice(int64_t global_batch, int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world)
    throw InputError(fmt::format("rank {} of {} ranks", rank, world));
  if (global_batch < 1 || global_batch % world != 0)
    throw InputError(
        fmt::format("global batch {} does not split evenly over {} ranks", global_batch, world));
  const int64_t count = global_batch / world;
  return {rank * count, count};
}

}  // namespace gpudays::data
