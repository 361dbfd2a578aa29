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

// Where a text handed to the tokenizer begins: at its start (a whole text, or the first piece of
// one), or continuing the text of the piece before it, cut where the tokenizer allows
// (BpeTokenizer::splits_at). A continuation's first part is no start: Prepend skips it.
enum class TextStart { kStart, kContinuation };

// `text` (well-formed UTF-8) after each of `steps` in turn; Prepend steps only at a kStart.
std::string apply_normalizer(const std::vector<NormalizerStep>& steps,
                             std::string_view text,
                             TextStart start = TextStart::kStart);

}  // namespace gpudays::data
