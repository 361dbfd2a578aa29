// The normalizer steps of normalizer.h, as `tokenizers` runs them on each piece of text between
// added tokens: Prepend leaves an empty piece empty (and a continuation as it is), Replace takes
// non-overlapping occurrences.
#include "data/normalizer.h"

namespace gpudays::data {
namespace {

std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content) {
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(pattern); at != std::string_view::npos;
       at = text.find(pattern, from)) {
    out.append(text.substr(from, at - from));
    out.append(content);
    from = at + pattern.size();
  }
  out.append(text.substr(from));
  return out;
}

std::string apply_step(const NormalizerStep& step, std::string text) {
  switch (step.kind) {
    case NormalizerStep::Kind::kNormalForm:
      return normalize(text, step.form);
    case NormalizerStep::Kind::kPrepend:
      return text.empty() ? text : step.text + text;
    case NormalizerStep::Kind::kReplace:
      return step.text.empty() ? text : replace_all(text, step.text, step.content);
  }
  return text;
}

}  // namespace

std::string apply_normalizer(const std::vector<NormalizerStep>& steps,
                             std::string_view text,
                             TextStart start) {
  std::string out(text);
  for (const NormalizerStep& step : steps)
    if (step.kind != NormalizerStep::Kind::kPrepend || start == TextStart::kStart)
      out = apply_step(step, std::move(out));
  return out;
}

}  // namespace gpudays::data
