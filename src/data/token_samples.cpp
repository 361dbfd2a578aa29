// open_token_samples (samples.h): fixed windows of seq_len + 1 tokens over a token stream, packed
// across documents. Sample i covers tokens [i * seq_len, i * seq_len + seq_len + 1): consecutive
// samples share one token, so every token is a label exactly once (Megatron-LM's GPT dataset
// packs the same way).
#include <fmt/format.h>

#include "common/error.h"
#include "data/samples.h"
#include "data/token_stream.h"

namespace gpudays::data {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class PackedTokenSamples : public TokenSamples {
 public:
  PackedTokenSamples(std::unique_ptr<TokenStream> stream, int64_t seq_len, const std::string& name)
      : stream_(std::move(stream)), seq_len_(seq_len) {
    num_samples_ = stream_->num_tokens() > seq_len ? (stream_->num_tokens() - 1) / seq_len : 0;
    if (num_samples_ == 0)
      throw InputError(fmt::format("{} holds {} tokens, too few for one sample of {} + 1",
                                   name,
                                   stream_->num_tokens(),
                                   seq_len));
  }
  int64_t num_samples() const override { return num_samples_; }
  int64_t sample_tokens() const override { return seq_len_ + 1; }
  int64_t vocab_limit() const override { return stream_->vocab_limit(); }
  void read_sample(int64_t index, int64_t* out) const override {
    if (index < 0 || index >= num_samples_)
      throw InputError(fmt::format("sample {} out of range [0, {})", index, num_samples_));
    stream_->read(index * seq_len_, seq_len_ + 1, out);
  }

 private:
  std::unique_ptr<TokenStream> stream_;
  int64_t seq_len_;
  int64_t num_samples_ = 0;
};

}  // namespace

std::unique_ptr<TokenSamples> open_token_samples(const std::string& prefix, int64_t seq_len) {
  if (seq_len < 1) throw InputError(fmt::format("sequence length {} must be at least 1", seq_len));
  std::unique_ptr<TokenStream> stream;
  if (ends_with(prefix, ".u16")) {
    stream = open_flat_stream(prefix, 2);
  } else if (ends_with(prefix, ".u32")) {
    stream = open_flat_stream(prefix, 4);
  } else if (ends_with(prefix, ".bin") || ends_with(prefix, ".idx")) {
    stream = open_megatron_stream(prefix.substr(0, prefix.size() - 4));  // either file names both
  } else {
    stream = open_megatron_stream(prefix);
  }
  return std::make_unique<PackedTokenSamples>(std::move(stream), seq_len, prefix);
}

}  // namespace gpudays::data
