// JSON as text for output (stdout, result files, logs): strings that are not valid UTF-8 (a path
// or a model name read from a database, a directory name on a Latin-1 file system) are written
// with U+FFFD in place of each bad byte, instead of nlohmann's type_error.316 ending the command.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpudays {

// j.dump(indent), with invalid UTF-8 replaced. indent -1: one line. Json: nlohmann::json or
// nlohmann::ordered_json.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace gpudays
