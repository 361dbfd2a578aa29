// Fuzz target: the Megatron-LM token dataset reader (data/megatron_index.h, data/samples.h), which
// `gpudays data inspect` and the trainer run on files from anywhere. The input's first byte picks
// the sequence length (1 to 16), the next two the .bin's size; the rest is the .idx, and the .bin
// is the input's bytes repeated to that size. A bug is any escape other than InputError, any
// sanitizer report, or an accepted dataset whose samples cannot all be read (reading past the
// mapped file is what the validation must prevent).
#include <vector>

#include "data/samples.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  if (size < 3) return 0;
  const int64_t seq_len = 1 + data[0] % 16;
  const size_t bin_bytes = data[1] | (size_t{data[2]} << 8);
  std::string bin(bin_bytes, '\0');
  for (size_t i = 0; i < bin_bytes; ++i) bin[i] = static_cast<char>(data[i % size]);
  const std::string idx_path = fuzz::write_input(data + 3, size - 3, "megatron.idx");
  const std::string prefix = idx_path.substr(0, idx_path.size() - 4);
  fuzz::write_input(reinterpret_cast<const uint8_t*>(bin.data()), bin.size(), "megatron.bin");
  fuzz::accepts([&] {
    const auto samples = data::open_token_samples(prefix, seq_len);
    if (samples->sample_tokens() != seq_len + 1) fuzz::fail("a sample is not seq_len + 1 tokens");
    std::vector<int64_t> out(seq_len + 1);
    for (int64_t i = 0; i < samples->num_samples() && i < 4096; ++i) {
      samples->read_sample(i, out.data());
      for (const int64_t token : out)
        if (token < 0 || token >= samples->vocab_limit())
          fuzz::fail("a token outside [0, vocab_limit)");
    }
  });
  return 0;
}
