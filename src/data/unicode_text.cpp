// Character classes (one table over every code point, built from ICU once), UTF-8 validation and
// ICU's normalizers.
#include "data/unicode_text.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>

#include <vector>

#include <fmt/format.h>

namespace gpudays::data {
namespace {

constexpr char32_t kCodePoints = 0x110000;

std::vector<CharClass> build_classes() {
  std::vector<CharClass> classes(kCodePoints, CharClass::kOther);
  for (char32_t c = 0; c < kCodePoints; ++c) {
    if (u_isUWhiteSpace(static_cast<UChar32>(c))) {
      classes[c] = CharClass::kSpace;
      continue;
    }
    switch (u_charType(static_cast<UChar32>(c))) {
      case U_UPPERCASE_LETTER:
      case U_LOWERCASE_LETTER:
      case U_TITLECASE_LETTER:
      case U_MODIFIER_LETTER:
      case U_OTHER_LETTER:
        classes[c] = CharClass::kLetter;
        break;
      case U_DECIMAL_DIGIT_NUMBER:
      case U_LETTER_NUMBER:
      case U_OTHER_NUMBER:
        classes[c] = CharClass::kNumber;
        break;
      default:
        break;
    }
  }
  return classes;
}

const icu::Normalizer2& normalizer(NormalForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* instance = nullptr;
  switch (form) {
    case NormalForm::kNfc:
      instance = icu::Normalizer2::getNFCInstance(status);
      break;
    case NormalForm::kNfd:
      instance = icu::Normalizer2::getNFDInstance(status);
      break;
    case NormalForm::kNfkc:
      instance = icu::Normalizer2::getNFKCInstance(status);
      break;
    case NormalForm::kNfkd:
      instance = icu::Normalizer2::getNFKDInstance(status);
      break;
  }
  if (U_FAILURE(status) || instance == nullptr)
    throw std::runtime_error(fmt::format("ICU normalizer unavailable: {}", u_errorName(status)));
  return *instance;
}

}  // namespace

CharClass char_class(char32_t code_point) {
  static const std::vector<CharClass> classes = build_classes();
  return code_point < kCodePoints ? classes[code_point] : CharClass::kOther;
}

int64_t first_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char b = s[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    int length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range (RFC 3629, table 3-7)
    if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    } else {
      return static_cast<int64_t>(i);
    }
    if (i + length > n || s[i + 1] < low || s[i + 1] > high) return static_cast<int64_t>(i);
    for (int k = 2; k < length; ++k)
      if ((s[i + k] & 0xC0) != 0x80) return static_cast<int64_t>(i);
    i += length;
  }
  return -1;
}

std::string normalize(std::string_view text, NormalForm form) {
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);
  const icu::Normalizer2& instance = normalizer(form);
  UErrorCode status = U_ZERO_ERROR;
  const icu::StringPiece piece(text.data(), static_cast<int32_t>(text.size()));
  if (instance.isNormalizedUTF8(piece, status) && U_SUCCESS(status)) return std::string(text);
  std::string out;
  icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(text.size()));
  status = U_ZERO_ERROR;
  instance.normalizeUTF8(0, piece, sink, nullptr, status);
  if (U_FAILURE(status))
    throw std::runtime_error(fmt::format("ICU normalization failed: {}", u_errorName(status)));
  return out;
}

}  // namespace gpudays::data
