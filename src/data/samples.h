// The trainer's view of a dataset: fixed-length samples addressed by a global index, and the
// seeded global order in which a run visits them. Torch-free; the readers behind it (the
// Megatron-LM indexed format, flat token files, packed images) live in this component.
//
// Contract the trainer relies on:
// - sample i is the same whatever the number of ranks or the micro-batch size;
// - the order of a run depends only on (seed, number of samples, epoch), so step k of a run
//   always sees the same global batch: samples order[k * global_batch .. (k + 1) * global_batch);
// - a rank reads the slice of the global batch it owns (see rank_slice below).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpudays::data {

// Token samples of `sample_tokens()` = seq_len + 1 tokens each (inputs and shifted labels),
// packed across documents (an end-of-document token between them, as the data was written).
class TokenSamples {
 public:
  virtual ~TokenSamples() = default;
  virtual int64_t num_samples() const = 0;
  virtual int64_t sample_tokens() const = 0;
  virtual int64_t vocab_limit() const = 0;  // every token id is below this (from the dtype)
  // Writes sample `index` (0 <= index < num_samples()) into out[0 .. sample_tokens()).
  virtual void read_sample(int64_t index, int64_t* out) const = 0;
};

// Image samples: uint8 pixels, channels-first, one class label each.
class ImageSamples {
 public:
  virtual ~ImageSamples() = default;
  virtual int64_t num_samples() const = 0;
  virtual int64_t channels() const = 0;
  virtual int64_t height() const = 0;
  virtual int64_t width() const = 0;
  virtual int64_t num_classes() const = 0;
  // Writes sample `index`'s pixels into pixels[0 .. channels*height*width) and returns its label.
  virtual int64_t read_sample(int64_t index, uint8_t* pixels) const = 0;
};

// Opens token samples of seq_len + 1 tokens from PREFIX: PREFIX.bin + PREFIX.idx (Megatron-LM
// indexed dataset; PREFIX.bin or PREFIX.idx name it too) or a flat token file PREFIX (.u16 / .u32
// by its name). Throws InputError naming the file and the offset for anything malformed.
std::unique_ptr<TokenSamples> open_token_samples(const std::string& prefix, int64_t seq_len);

// Opens a packed image file (written by `gpudays data images`). Throws InputError when malformed.
std::unique_ptr<ImageSamples> open_image_samples(const std::string& path);

// A held-out split: the last `eval_fraction` of the samples (at least one when there are two or
// more), never in the training order.
struct Split {
  int64_t train_samples = 0;  // samples [0, train_samples) train
  int64_t eval_samples = 0;   // samples [train_samples, train_samples + eval_samples) evaluate
};
Split split_samples(int64_t num_samples, double eval_fraction);

// The global visiting order of one epoch: a permutation of [0, size) seeded by (seed, epoch),
// independent of ranks and micro-batch sizes, computed per position in O(1) memory (a keyed
// Feistel network with cycle walking; the full order of the Pythia data, 146M samples, would be
// 1.2 GB per rank as a table).
class EpochPermutation {
 public:
  EpochPermutation(int64_t size, uint64_t seed, int64_t epoch);
  int64_t at(int64_t position) const;  // 0 <= position < size
  int64_t size() const { return size_; }

 private:
  uint64_t feistel(uint64_t x) const;
  int64_t size_;
  int half_bits_ = 1;  // the network permutes [0, 4^half_bits_), the smallest such range >= size
  uint64_t keys_[6] = {};
};

// The whole order of one epoch as a table (for small sets: tests, the image packer).
std::vector<int64_t> epoch_order(int64_t train_samples, uint64_t seed, int64_t epoch);

// The global sample index of position `position` of the run (epochs follow each other; epoch e
// uses EpochPermutation(train_samples, seed, e)). O(1) memory.
class SampleOrder {
 public:
  SampleOrder(int64_t train_samples, uint64_t seed);
  int64_t at(int64_t position);

 private:
  int64_t train_samples_;
  uint64_t seed_;
  int64_t epoch_ = -1;
  EpochPermutation permutation_;
};

// The positions [first, first + count) of a global batch that rank `rank` of `world` reads:
// contiguous, equal slices (global_batch must be divisible by world).
struct RankSlice {
  int64_t first = 0;
  int64_t count = 0;
};
RankSlice rank_slice(int64_t global_batch, int rank, int world);

}  // namespace gpudays::data
