// Internal to BpeTokenizer::load (tokenizer_json.cpp): the readers of a tokenizer.json's sections,
// each refusing with an InputError (`path: what`) a value that would change the ids.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/bpe_tokenizer.h"

namespace gpudays::data::tokenizer_json {

[[noreturn]] void unsupported(const std::string& path, const std::string& what);
// `object[key]` is the boolean true.
bool flag(const nlohmann::json& object, const char* key);

// The "normalizer" section (tokenizer_json_pipeline.cpp).
std::vector<NormalizerStep> read_normalizer(const nlohmann::json& root, const std::string& path);
// The "pre_tokenizer" section: the settings' pre-tokenizer fields, and whether the model's symbols
// are bytes (a ByteLevel pre-tokenizer) or characters.
void read_pre_tokenizer(const nlohmann::json& root,
                        const std::string& path,
                        TokenizerSettings& settings,
                        BpeModelOptions& model);

}  // namespace gpudays::data::tokenizer_json
