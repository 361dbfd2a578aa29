// The pre-tokenizers' word splits, each a scanner over code points that follows its pattern's
// alternatives in order, with no regex engine: GPT-2's (the ByteLevel pre-tokenizer's own, also
// written as a Split), and the tiktoken-style patterns of Llama-3 and Qwen2 (a Split
// pre-tokenizer's regex). A Split regex is recognised by its exact string; the loader refuses any
// other.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gpudays::data {

struct ByteSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
};

enum class WordSplit {
  kNone,    // the piece is one word
  kGpt2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kLlama3,  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
            // ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kQwen2,   // Llama-3's with \p{N} for \p{N}{1,3}: digits one by one
};

// The split a Split pre-tokenizer's regex (as tokenizer.json holds it, JSON escapes undone) names:
// one of the three patterns above, character for character; nullopt for any other string.
std::optional<WordSplit> word_split_of_pattern(std::string_view regex);

// Splits well-formed UTF-8 `text` as `split`'s pattern does (\p{L}, \p{N} by general category,
// \s by the White_Space property, (?i:...) by Unicode case folding), appending the words' byte
// spans (which cover `text`) to `words`.
void split_words(WordSplit split, std::string_view text, std::vector<ByteSpan>& words);
inline void split_gpt2_words(std::string_view text, std::vector<ByteSpan>& words) {
  split_words(WordSplit::kGpt2, text, words);
}

}  // namespace gpudays::data
