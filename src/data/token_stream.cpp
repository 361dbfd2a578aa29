// The two token streams: a Megatron-LM dataset (its sequences found by the running sum of their
// lengths) and a flat token file. Both read the mapped file directly.
#include "data/token_stream.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays::data {
namespace {

// Converts `count` items of `dtype` at `bytes` to int64; `byte_offset` names the first in errors.
void widen(const uint8_t* bytes,
           const TokenDtype& dtype,
           int64_t count,
           int64_t* out,
           const std::string& path,
           int64_t byte_offset) {
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* at = bytes + i * dtype.item_bytes;
    int64_t value = 0;
    switch (dtype.code) {
      case 1:
        value = at[0];
        break;
      case 2:
        value = static_cast<int8_t>(at[0]);
        break;
      case 3: {
        int16_t v;
        std::memcpy(&v, at, 2);
        value = v;
      } break;
      case 4: {
        int32_t v;
        std::memcpy(&v, at, 4);
        value = v;
      } break;
      case 5:
        std::memcpy(&value, at, 8);
        break;
      default: {
        uint16_t v;
        std::memcpy(&v, at, 2);
        value = v;
      }
    }
    if (value < 0)
      throw InputError(fmt::format(
          "{}: offset {}: negative token id {}", path, byte_offset + i * dtype.item_bytes, value));
    out[i] = value;
  }
}

class MegatronStream : public TokenStream {
 public:
  explicit MegatronStream(const std::string& prefix)
      : bin_(prefix + ".bin"), idx_(prefix + ".idx") {
    index_ = parse_megatron_index(
        idx_.data(), idx_.size_bytes(), idx_.path(), bin_.size_bytes(), bin_.path());
    starts_.resize(index_.sequence_lengths.size() + 1, 0);
    for (size_t i = 0; i < index_.sequence_lengths.size(); ++i)
      starts_[i + 1] = starts_[i] + index_.sequence_lengths[i];
  }
  int64_t num_tokens() const override { return starts_.back(); }
  int64_t vocab_limit() const override { return index_.dtype.vocab_limit; }

  void read(int64_t first, int64_t count, int64_t* out) const override {
    // The sequence holding `first`: the last start at or before it.
    size_t seq = std::upper_bound(starts_.begin(), starts_.end(), first) - starts_.begin() - 1;
    while (count > 0) {
      const int64_t within = first - starts_[seq];
      const int64_t take = std::min(count, starts_[seq + 1] - first);
      const int64_t byte = index_.sequence_pointers[seq] + within * index_.dtype.item_bytes;
      widen(bin_.data() + byte, index_.dtype, take, out, bin_.path(), byte);
      out += take;
      first += take;
      count -= take;
      ++seq;
    }
  }

 private:
  MappedFile bin_;
  MappedFile idx_;
  MegatronIndex index_;
  std::vector<int64_t> starts_;  // token position where each sequence starts, then the total
};

class FlatStream : public TokenStream {
 public:
  FlatStream(const std::string& path, int item_bytes) : file_(path) {
    dtype_ = token_dtype_from_code(item_bytes == 2 ? 8 : 4, path, 0);
    if (item_bytes == 4) dtype_ = {4, "uint32", 4, false, int64_t{1} << 32};
    if (file_.size_bytes() % item_bytes != 0)
      throw InputError(
          fmt::format("{}: offset {}: truncated; {} bytes is not a whole number of "
                      "{}-byte tokens",
                      path,
                      file_.size_bytes() - file_.size_bytes() % item_bytes,
                      file_.size_bytes(),
                      item_bytes));
  }
  int64_t num_tokens() const override { return file_.size_bytes() / dtype_.item_bytes; }
  int64_t vocab_limit() const override { return dtype_.vocab_limit; }

  void read(int64_t first, int64_t count, int64_t* out) const override {
    const uint8_t* at = file_.data() + first * dtype_.item_bytes;
    for (int64_t i = 0; i < count; ++i) {
      if (dtype_.item_bytes == 2) {
        uint16_t v;
        std::memcpy(&v, at + 2 * i, 2);
        out[i] = v;
      } else {
        uint32_t v;
        std::memcpy(&v, at + 4 * i, 4);
        out[i] = v;
      }
    }
  }

 private:
  MappedFile file_;
  TokenDtype dtype_;
};

}  // namespace

std::unique_ptr<TokenStream> open_megatron_stream(const std::string& prefix) {
  return std::make_unique<MegatronStream>(prefix);
}

std::unique_ptr<TokenStream> open_flat_stream(const std::string& path, int item_bytes) {
  return std::make_unique<FlatStream>(path, item_bytes);
}

}  // namespace gpudays::data
