// Helpers for error messages.
#include "common/error.h"

namespace gpudays {

std::string one_line(const std::exception& e) {
  const std::string text = e.what();
  const size_t start = text.find_first_not_of(" \n\r\t");
  if (start == std::string::npos) return "";
  const size_t end = text.find_first_of("\n\r", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string join_choices(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += (i + 1 == choices.size()) ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

}  // namespace gpudays
