// The Unicode facts the byte-level BPE tokenizer needs: UTF-8 validation, the character classes
// of the GPT-2 pre-tokenizer's pattern (\p{L}, \p{N}, \s) and the normal forms of tokenizer.json
// normalizers. Character data comes from ICU (Debian's libicu).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpudays::data {

enum class CharClass : uint8_t { kOther, kLetter, kNumber, kSpace };

// Letter = general category L*, number = N*, space = the White_Space property (what Oniguruma's
// \s matches in UTF-8 patterns); everything else is kOther.
CharClass char_class(char32_t code_point);

// The byte offset of the first byte that is not well-formed UTF-8, or -1 when all of it is.
int64_t first_invalid_utf8(std::string_view text);

// Decodes the code point at text[at] (well-formed UTF-8) and returns its length in bytes.
inline int decode_utf8(std::string_view text, size_t at, char32_t& code_point) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(text[at + i]); };
  if (b(0) < 0x80) {
    code_point = b(0);
    return 1;
  }
  if (b(0) < 0xE0) {
    code_point = ((b(0) & 0x1Fu) << 6) | (b(1) & 0x3Fu);
    return 2;
  }
  if (b(0) < 0xF0) {
    code_point = ((b(0) & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    return 3;
  }
  code_point =
      ((b(0) & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
  return 4;
}

enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };

// `text` (well-formed UTF-8) in normal form `form`; ASCII text is returned as it is.
std::string normalize(std::string_view text, NormalForm form);

}  // namespace gpudays::data
