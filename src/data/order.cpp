// The pure functions of samples.h: the held-out split, the seeded global order and the rank
// slices. The permutation uses its own generator (splitmix64) and bounded draws, not <random>'s
// distributions, whose results differ between standard libraries: an order is the same on every
// machine.
#include <cmath>
#include <numeric>

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

// A uniform draw in [0, bound) without modulo bias (Lemire, "Fast Random Integer Generation in
// an Interval", ACM TOMACS 2019).
uint64_t draw_below(uint64_t& state, uint64_t bound) {
  unsigned __int128 product = static_cast<unsigned __int128>(splitmix64(state)) * bound;
  uint64_t low = static_cast<uint64_t>(product);
  if (low < bound) {
    const uint64_t threshold = -bound % bound;
    while (low < threshold) {
      product = static_cast<unsigned __int128>(splitmix64(state)) * bound;
      low = static_cast<uint64_t>(product);
    }
  }
  return static_cast<uint64_t>(product >> 64);
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

std::vector<int64_t> epoch_order(int64_t train_samples, uint64_t seed, int64_t epoch) {
  if (train_samples < 0 || epoch < 0)
    throw InputError(fmt::format("no order of {} samples in epoch {}", train_samples, epoch));
  std::vector<int64_t> order(train_samples);
  std::iota(order.begin(), order.end(), int64_t{0});
  uint64_t state = seed;
  state = splitmix64(state) ^ (static_cast<uint64_t>(epoch) * 0xD1B54A32D192ED03ull);
  for (int64_t i = train_samples - 1; i > 0; --i) {  // Fisher-Yates
    const int64_t j = static_cast<int64_t>(draw_below(state, static_cast<uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

SampleOrder::SampleOrder(int64_t train_samples, uint64_t seed)
    : train_samples_(train_samples), seed_(seed) {
  if (train_samples < 1) throw InputError("no training samples to order");
}

int64_t SampleOrder::at(int64_t position) {
  if (position < 0) throw InputError(fmt::format("negative sample position {}", position));
  const int64_t epoch = position / train_samples_;
  if (epoch != epoch_) {
    order_ = epoch_order(train_samples_, seed_, epoch);
    epoch_ = epoch;
  }
  return order_[position % train_samples_];
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
