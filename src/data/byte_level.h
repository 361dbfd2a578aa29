// The byte-level pre-tokenizer of GPT-2 (tokenizer.json "ByteLevel"): the split of text into
// words by GPT-2's pattern, and the map of the 256 byte values onto printable characters in
// which the vocabulary is written. BPE itself is in bpe_model.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpudays::data {

struct ByteSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Splits well-formed UTF-8 `text` as the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does, appending the words' byte spans (which cover `text`) to `words`.
void split_gpt2_words(std::string_view text, std::vector<ByteSpan>& words);

// The character (UTF-8) that stands for each byte value in a byte-level vocabulary: the printable
// bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves, the others for U+0100 on
// in byte order (GPT-2's bytes_to_unicode).
std::array<std::string, 256> byte_level_alphabet();

}  // namespace gpudays::data
