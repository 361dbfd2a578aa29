// The "normalizer" and "pre_tokenizer" sections of a tokenizer.json (tokenizer_json.h): the
// normalizers of normalizer.h, alone or in a Sequence; and ByteLevel, Split (a known pattern,
// Isolated) then ByteLevel without its own split, Metaspace, or none.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "data/tokenizer_json.h"
#include "data/unicode_text.h"

namespace gpudays::data::tokenizer_json {
namespace {

using nlohmann::json;

std::string type_of(const json& object) {
  return object.is_object() ? object.value("type", "") : std::string();
}

void add_normalizer(const json& normalizer,
                    const std::string& path,
                    std::vector<NormalizerStep>& steps) {
  const std::string type = type_of(normalizer);
  if (type == "Sequence") {
    for (const json& step : normalizer.value("normalizers", json::array()))
      add_normalizer(step, path, steps);
    return;
  }
  NormalizerStep step;
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    step.form = type == "NFC"    ? NormalForm::kNfc
                : type == "NFD"  ? NormalForm::kNfd
                : type == "NFKC" ? NormalForm::kNfkc
                                 : NormalForm::kNfkd;
  } else if (type == "Prepend") {
    step.kind = NormalizerStep::Kind::kPrepend;
    step.text = normalizer.at("prepend").get<std::string>();
  } else if (type == "Replace") {
    const json& pattern = normalizer.at("pattern");
    if (!pattern.contains("String") || pattern.at("String").get<std::string>().empty())
      unsupported(
          path,
          fmt::format("normalizer Replace of {} is not supported; valid: a non-empty String",
                      json_text(pattern)));
    step.kind = NormalizerStep::Kind::kReplace;
    step.text = pattern.at("String").get<std::string>();
    step.content = normalizer.at("content").get<std::string>();
  } else {
    unsupported(path,
                fmt::format("normalizer '{}' is not supported; valid: NFC, NFD, NFKC, NFKD, "
                            "Prepend, Replace or a Sequence of them",
                            type));
  }
  steps.push_back(step);
}

// A Split before ByteLevel: a known pattern, each match a word (Isolated, not inverted).
WordSplit read_split(const json& split, const std::string& path) {
  // The pattern as the file writes it (JSON escapes kept), so that a message stays one line.
  const json& pattern = split.at("pattern");
  const auto regex = pattern.find("Regex");
  const auto known = regex != pattern.end() && regex->is_string()
                         ? word_split_of_pattern(regex->get<std::string>())
                         : std::nullopt;
  if (!known)
    unsupported(path,
                fmt::format("Split pattern {} is not supported; valid: GPT-2's, Llama-3's or "
                            "Qwen2's Regex, exactly as their tokenizer.json files write it",
                            json_text(pattern)));
  const std::string behavior = split.value("behavior", "");
  if (behavior != "Isolated")
    unsupported(path,
                fmt::format("Split behavior '{}' is not supported; valid: Isolated", behavior));
  if (flag(split, "invert")) unsupported(path, "Split with invert is not supported");
  return *known;
}

void read_byte_level(const json& pre, TokenizerSettings& settings, BpeModelOptions& model) {
  model.byte_level = true;
  settings.add_prefix_space = flag(pre, "add_prefix_space");
  settings.split =
      !pre.contains("use_regex") || flag(pre, "use_regex") ? WordSplit::kGpt2 : WordSplit::kNone;
}

// Sequence [Split, ByteLevel] (Llama-3, Qwen2): ByteLevel only maps the Split's words to bytes.
void read_sequence(const json& pre,
                   const std::string& path,
                   TokenizerSettings& settings,
                   BpeModelOptions& model) {
  const json& steps = pre.value("pretokenizers", json::array());
  if (steps.size() != 2 || type_of(steps[0]) != "Split" || type_of(steps[1]) != "ByteLevel") {
    std::vector<std::string> types;
    for (const json& step : steps) types.push_back(type_of(step));
    unsupported(
        path,
        fmt::format("pre-tokenizer Sequence [{}] is not supported; valid: [Split, ByteLevel]",
                    fmt::join(types, ", ")));
  }
  read_byte_level(steps[1], settings, model);
  if (settings.split != WordSplit::kNone || settings.add_prefix_space)
    unsupported(path, "a ByteLevel after a Split must have use_regex and add_prefix_space false");
  settings.split = read_split(steps[0], path);
}

Metaspace read_metaspace(const json& pre, const std::string& path) {
  Metaspace meta;
  meta.replacement = pre.value("replacement", meta.replacement);
  const std::string scheme = pre.value("prepend_scheme", "always");
  if (scheme == "first")
    meta.prepend = Metaspace::Prepend::kFirst;
  else if (scheme == "never")
    meta.prepend = Metaspace::Prepend::kNever;
  else if (scheme != "always")
    unsupported(path,
                fmt::format("Metaspace prepend_scheme '{}' is not supported; valid: always, "
                            "first, never",
                            scheme));
  // As tokenizers reads older files: add_prefix_space false is prepend_scheme never.
  if (pre.contains("add_prefix_space") && !flag(pre, "add_prefix_space")) {
    if (meta.prepend != Metaspace::Prepend::kNever && pre.contains("prepend_scheme"))
      unsupported(path, "Metaspace add_prefix_space false contradicts its prepend_scheme");
    meta.prepend = Metaspace::Prepend::kNever;
  }
  meta.split = !pre.contains("split") || flag(pre, "split");
  char32_t c = 0;
  if (meta.replacement.empty() || first_invalid_utf8(meta.replacement) >= 0 ||
      static_cast<size_t>(decode_utf8(meta.replacement, 0, c)) != meta.replacement.size())
    unsupported(path,
                fmt::format("Metaspace replacement '{}' is not one character", meta.replacement));
  return meta;
}

}  // namespace

std::vector<NormalizerStep> read_normalizer(const json& root, const std::string& path) {
  std::vector<NormalizerStep> steps;
  const json& normalizer = root.value("normalizer", json());
  if (!normalizer.is_null()) add_normalizer(normalizer, path, steps);
  return steps;
}

void read_pre_tokenizer(const json& root,
                        const std::string& path,
                        TokenizerSettings& settings,
                        BpeModelOptions& model) {
  const json& pre = root.value("pre_tokenizer", json());
  const std::string type = type_of(pre);
  model.byte_level = false;
  settings.split = WordSplit::kNone;
  if (pre.is_null()) return;  // each piece is one word of characters
  if (type == "ByteLevel") return read_byte_level(pre, settings, model);
  if (type == "Sequence") return read_sequence(pre, path, settings, model);
  if (type == "Metaspace") {
    settings.metaspace = read_metaspace(pre, path);
    return;
  }
  unsupported(path,
              fmt::format("pre-tokenizer '{}' is not supported; valid: ByteLevel, Sequence "
                          "[Split, ByteLevel], Metaspace or none",
                          type));
}

}  // namespace gpudays::data::tokenizer_json
