// The byte alphabet of the ByteLevel pre-tokenizer (GPT-2's): the map of the 256 byte values onto
// printable characters in which a byte-level vocabulary is written. Its word split is in
// word_split.h, BPE itself in bpe_model.h.
#pragma once

#include <array>
#include <string>

namespace gpudays::data {

// The character (UTF-8) that stands for each byte value in a byte-level vocabulary: the printable
// bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves, the others for U+0100 on
// in byte order (GPT-2's bytes_to_unicode).
std::array<std::string, 256> byte_level_alphabet();

}  // namespace gpudays::data
