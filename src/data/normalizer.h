// The tokenizer.json normalizers the tokenizer runs, in order: the Unicode normal forms (NFC, NFD,
// NFKC, NFKD, with ICU), and Prepend and Replace of a literal string, which SentencePiece-style
// files use (Llama-2's Prepend("▁") then Replace(" " -> "▁")). The loader refuses the others.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "data/unicode_text.h"

namespace gpudays::data {

struct NormalizerStep {
  enum class Kind { kNormalForm, kPrepend, kReplace };
  Kind kind = Kind::kNormalForm;
  NormalForm form = NormalForm::kNfc;  // kNormalForm
  std::string text;     // kPrepend: put before a non-empty text; kReplace: the string replaced
  std::string content;  // kReplace: what each occurrence (left to right) becomes
  bool operator==(const NormalizerStep&) const = default;
};

// `text` (well-formed UTF-8) after each of `steps` in turn.
std::string apply_normalizer(const std::vector<NormalizerStep>& steps, std::string_view text);

}  // namespace gpudays::data
