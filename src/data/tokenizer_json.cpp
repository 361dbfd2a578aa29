// BpeTokenizer::load: reads a HuggingFace tokenizer.json (nlohmann_json) into the tokenizer's
// settings and BPE model, refusing every field value that would change the ids (see
// bpe_tokenizer.h). Merges come as "a b" strings (older files) or ["a", "b"] pairs (newer ones).
// The normalizer and pre-tokenizer sections are read in tokenizer_json_pipeline.cpp.
#include "data/tokenizer_json.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/input_files.h"
#include "common/json_errors.h"
#include "common/json_text.h"

namespace gpudays::data {
namespace tokenizer_json {

using nlohmann::json;

void unsupported(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path, what));
}

bool flag(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_boolean() && found->get<bool>();
}

namespace {

bool is_empty(const json& object, const char* key) {
  const auto found = object.find(key);
  return found == object.end() || found->is_null() ||
         (found->is_string() && found->get<std::string>().empty());
}

// Truncation and padding change what encode() returns; files of trained models leave them null.
void refuse_post_steps(const json& root, const std::string& path) {
  for (const char* key : {"truncation", "padding"})
    if (!is_empty(root, key))
      unsupported(path, fmt::format("{} is set, which is not supported (it changes the ids)", key));
}

// A token's id: an integer in [0, 2^31 - 1), never narrowed (2^40 would wrap to 0, the
// end-of-text id of many vocabularies). Token files hold 16- or 32-bit ids (megatron_index.h).
int32_t token_id(const json& id, const std::string& path, const std::string& token) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  if (!id.is_number_integer() || (id.is_number_unsigned() && id.get<uint64_t>() >= kLimit) ||
      (!id.is_number_unsigned() && (id.get<int64_t>() < 0 || id.get<int64_t>() >= kLimit))) {
    unsupported(
        path,
        fmt::format("token '{}' has id {}, not an integer in [0, 2^31 - 1)", token, json_text(id)));
  }
  return static_cast<int32_t>(id.get<int64_t>());
}

std::vector<AddedToken> added_tokens(const json& root, const std::string& path) {
  std::vector<AddedToken> tokens;
  for (const json& entry : root.value("added_tokens", json::array())) {
    AddedToken token;
    token.content = entry.at("content").get<std::string>();
    token.id = token_id(entry.at("id"), path, token.content);
    token.normalized = flag(entry, "normalized");
    token.special = flag(entry, "special");
    token.lstrip = flag(entry, "lstrip");
    token.rstrip = flag(entry, "rstrip");
    if (flag(entry, "single_word"))
      unsupported(
          path,
          fmt::format("added token '{}' uses single_word, which is not supported", token.content));
    tokens.push_back(token);
  }
  return tokens;
}

void read_merges(const json& model, const std::string& path, BpeModelOptions& options) {
  for (const json& merge : model.at("merges")) {
    if (merge.is_array() && merge.size() == 2) {
      options.merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
      continue;
    }
    const std::string text = merge.get<std::string>();
    const size_t space = text.find(' ', 1);
    if (space == std::string::npos) unsupported(path, fmt::format("merge '{}' is not 'a b'", text));
    options.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
  }
}

BpeModelOptions read_model(const json& root, const std::string& path) {
  const json& model = root.at("model");
  if (model.value("type", "") != "BPE") unsupported(path, "the model must be BPE");
  if (!model.value("dropout", json()).is_null() && model.at("dropout").get<double>() != 0.0)
    unsupported(path, "BPE dropout is not supported (it makes tokenization random)");
  if (!is_empty(model, "continuing_subword_prefix") || !is_empty(model, "end_of_word_suffix"))
    unsupported(path, "continuing_subword_prefix and end_of_word_suffix are not supported");
  BpeModelOptions options;
  for (const auto& [token, id] : model.at("vocab").items())
    options.vocab[token] = token_id(id, path, token);
  read_merges(model, path, options);
  if (!is_empty(model, "unk_token")) {
    const auto unk = options.vocab.find(model.at("unk_token").get<std::string>());
    if (unk == options.vocab.end()) unsupported(path, "the unk_token is not in the vocabulary");
    options.unk_id = unk->second;
  }
  options.fuse_unk = flag(model, "fuse_unk");
  options.byte_fallback = flag(model, "byte_fallback");
  options.ignore_merges = flag(model, "ignore_merges");
  return options;
}

}  // namespace
}  // namespace tokenizer_json

BpeTokenizer BpeTokenizer::load(const std::string& path) {
  using namespace tokenizer_json;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(fmt::format("tokenizer {} is a directory; give its tokenizer.json", path));
  }
  // The largest public tokenizer.json files are tens of MiB (Gemma's: 33 MiB).
  check_input_file(path, std::uintmax_t{512} << 20, "tokenizer.json files");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("cannot open tokenizer {}: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const json root = json::parse(text.str());
    refuse_post_steps(root, path);
    TokenizerSettings settings;
    settings.normalizer = read_normalizer(root, path);
    BpeModelOptions model = read_model(root, path);
    read_pre_tokenizer(root, path, settings, model);
    settings.added_tokens = added_tokens(root, path);
    try {
      return BpeTokenizer(std::move(settings), std::move(model));
    } catch (const InputError& e) {
      const std::string what = e.what();
      if (what.rfind(path, 0) == 0) throw;
      throw InputError(fmt::format("{}: {}", path, what));
    }
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: tokenizer.json {}", path, json_problem(e)));
  }
}

}  // namespace gpudays::data
