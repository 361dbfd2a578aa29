// A stand-in for src/data's readers and orders (data/samples.h) until that component lands: flat
// little-endian uint16 token files (PREFIX ending in .u16) and a seeded permutation per epoch.
// Built only while src/data has no CMakeLists.txt (see CMakeLists.txt here); delete it then.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "common/error.h"
#include "data/samples.h"

namespace gpudays::data {
namespace {

class FlatU16Samples final : public TokenSamples {
 public:
  FlatU16Samples(const std::string& path, int64_t seq_len) : path_(path), tokens_(seq_len + 1) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw InputError(fmt::format("{}: cannot read the token file", path));
    const int64_t bytes = static_cast<int64_t>(in.tellg());
    if (bytes % 2 != 0) throw InputError(fmt::format("{}: odd size for uint16 tokens", path));
    data_.resize(static_cast<size_t>(bytes / 2));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(data_.data()), bytes);
    if (num_samples() < 1) {
      throw InputError(fmt::format("{}: fewer than {} tokens", path, tokens_));
    }
  }
  int64_t num_samples() const override { return static_cast<int64_t>(data_.size()) / tokens_; }
  int64_t sample_tokens() const override { return tokens_; }
  int64_t vocab_limit() const override { return 65536; }
  void read_sample(int64_t index, int64_t* out) const override {
    for (int64_t i = 0; i < tokens_; ++i) out[i] = data_[static_cast<size_t>(index * tokens_ + i)];
  }

 private:
  std::string path_;
  int64_t tokens_;
  std::vector<uint16_t> data_;
};

}  // namespace

std::unique_ptr<TokenSamples> open_token_samples(const std::string& prefix, int64_t seq_len) {
  if (prefix.size() < 4 || prefix.substr(prefix.size() - 4) != ".u16") {
    throw InputError(fmt::format("{}: this build reads flat .u16 token files only", prefix));
  }
  return std::make_unique<FlatU16Samples>(prefix, seq_len);
}

std::unique_ptr<ImageSamples> open_image_samples(const std::string& path) {
  throw InputError(fmt::format("{}: this build has no image reader yet", path));
}

Split split_samples(int64_t num_samples, double eval_fraction) {
  int64_t eval = static_cast<int64_t>(static_cast<double>(num_samples) * eval_fraction);
  if (num_samples >= 2) eval = std::clamp<int64_t>(eval, 1, num_samples - 1);
  return {num_samples - eval, eval};
}

std::vector<int64_t> epoch_order(int64_t train_samples, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(train_samples));
  for (int64_t i = 0; i < train_samples; ++i) order[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(seed * 1000003ULL + static_cast<uint64_t>(epoch));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

SampleOrder::SampleOrder(int64_t train_samples, uint64_t seed)
    : train_samples_(train_samples), seed_(seed) {}

int64_t SampleOrder::at(int64_t position) {
  const int64_t epoch = position / train_samples_;
  if (epoch != epoch_) {
    order_ = epoch_order(train_samples_, seed_, epoch);
    epoch_ = epoch;
  }
  return order_[static_cast<size_t>(position % train_samples_)];
}

RankSlice rank_slice(int64_t global_batch, int rank, int world) {
  if (world < 1 || global_batch % world != 0) {
    throw InputError(
        fmt::format("global batch {} does not split over {} ranks", global_batch, world));
  }
  const int64_t count = global_batch / world;
  return {rank * count, count};
}

}  // namespace gpudays::data
