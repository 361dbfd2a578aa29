// GPT-2's byte alphabet (byte_level.h).
#include "data/byte_level.h"

namespace gpudays::data {

std::array<std::string, 256> byte_level_alphabet() {
  std::array<std::string, 256> alphabet;
  char32_t next_extra = 0x100;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                           (byte >= 0xAE && byte <= 0xFF);
    const char32_t c = printable ? static_cast<char32_t>(byte) : next_extra++;
    std::string utf8;
    if (c < 0x80) {
      utf8.push_back(static_cast<char>(c));
    } else {  // every mapped character is below U+0800: two bytes
      utf8.push_back(static_cast<char>(0xC0 | (c >> 6)));
      utf8.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
    alphabet[byte] = utf8;
  }
  return alphabet;
}

}  // namespace gpudays::data
