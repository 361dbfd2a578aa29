// BpeTokenizer::load: reads a HuggingFace tokenizer.json (nlohmann_json) into the tokenizer's
// settings and BPE model, refusing every field value that would change the ids (see
// bpe_tokenizer.h). Merges come as "a b" strings (older files) or ["a", "b"] pairs (newer ones).
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "data/bpe_tokenizer.h"

namespace gpudays::data {
namespace {

using nlohmann::json;

[[noreturn]] void unsupported(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path, what));
}

bool flag(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_boolean() && found->get<bool>();
}

bool is_empty(const json& object, const char* key) {
  const auto found = object.find(key);
  return found == object.end() || found->is_null() ||
         (found->is_string() && found->get<std::string>().empty());
}

NormalForm normal_form(const json& normalizer, const std::string& path) {
  const std::string type = normalizer.value("type", "");
  if (type == "NFC") return NormalForm::kNfc;
  if (type == "NFD") return NormalForm::kNfd;
  if (type == "NFKC") return NormalForm::kNfkc;
  if (type == "NFKD") return NormalForm::kNfkd;
  unsupported(path,
              fmt::format("normalizer '{}' is not supported; valid: NFC, NFD, NFKC, NFKD or "
                          "a Sequence of them",
                          type));
}

std::vector<NormalForm> normal_forms(const json& root, const std::string& path) {
  const json& normalizer = root.value("normalizer", json());
  if (normalizer.is_null()) return {};
  if (normalizer.value("type", "") != "Sequence") return {normal_form(normalizer, path)};
  std::vector<NormalForm> forms;
  for (const json& step : normalizer.value("normalizers", json::array()))
    forms.push_back(normal_form(step, path));
  return forms;
}

void read_pre_tokenizer(const json& root, const std::string& path, TokenizerSettings& settings) {
  const json& pre = root.value("pre_tokenizer", json());
  if (pre.is_null() || pre.value("type", "") != "ByteLevel")
    unsupported(path, "the pre-tokenizer must be ByteLevel (a byte-level BPE tokenizer)");
  settings.add_prefix_space = flag(pre, "add_prefix_space");
  settings.use_regex = !pre.contains("use_regex") || flag(pre, "use_regex");
}

std::vector<AddedToken> added_tokens(const json& root, const std::string& path) {
  std::vector<AddedToken> tokens;
  for (const json& entry : root.value("added_tokens", json::array())) {
    AddedToken token;
    token.content = entry.at("content").get<std::string>();
    token.id = entry.at("id").get<int32_t>();
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

BpeModelOptions read_model(const json& root, const std::string& path) {
  const json& model = root.at("model");
  if (model.value("type", "") != "BPE") unsupported(path, "the model must be BPE");
  if (!model.value("dropout", json()).is_null() && model.at("dropout").get<double>() != 0.0)
    unsupported(path, "BPE dropout is not supported (it makes tokenization random)");
  if (flag(model, "byte_fallback")) unsupported(path, "byte_fallback is not supported");
  if (!is_empty(model, "continuing_subword_prefix") || !is_empty(model, "end_of_word_suffix"))
    unsupported(path, "continuing_subword_prefix and end_of_word_suffix are not supported");
  BpeModelOptions options;
  for (const auto& [token, id] : model.at("vocab").items())
    options.vocab[token] = id.get<int32_t>();
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
  if (!is_empty(model, "unk_token")) {
    const auto unk = options.vocab.find(model.at("unk_token").get<std::string>());
    if (unk == options.vocab.end()) unsupported(path, "the unk_token is not in the vocabulary");
    options.unk_id = unk->second;
  }
  options.ignore_merges = flag(model, "ignore_merges");
  return options;
}

}  // namespace

BpeTokenizer BpeTokenizer::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open tokenizer {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const json root = json::parse(text.str());
    TokenizerSettings settings;
    settings.normal_forms = normal_forms(root, path);
    read_pre_tokenizer(root, path, settings);
    settings.added_tokens = added_tokens(root, path);
    try {
      return BpeTokenizer(std::move(settings), read_model(root, path));
    } catch (const InputError& e) {
      const std::string what = e.what();
      if (what.rfind(path, 0) == 0) throw;
      throw InputError(fmt::format("{}: {}", path, what));
    }
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not a valid tokenizer.json: {}", path, e.what()));
  }
}

}  // namespace gpudays::data
