// json_problem: the library's message taken apart by its error id.
#include "common/json_errors.h"

#include <string_view>

#include <fmt/format.h>

namespace gpudays {
namespace {

// The message without its "[json.exception.KIND.ID] " tag.
std::string untagged(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2)
                                                                            : what;
}

// The text between `before` and `after` in `text` ("" when either is missing).
std::string between(const std::string& text, std::string_view before, std::string_view after) {
  const size_t start = text.find(before);
  if (start == std::string::npos) return "";
  const size_t from = start + before.size();
  const size_t end = text.find(after, from);
  return end == std::string::npos ? "" : text.substr(from, end - from);
}

// "string" -> "a string", "object" -> "an object", "null" -> "null".
std::string with_article(const std::string& type) {
  if (type == "null") return type;
  return fmt::format("{} {}", type.find_first_of("aeiou") == 0 ? "an" : "a", type);
}

// 101: "parse error at line 3, column 7: syntax error while parsing value - invalid literal; last
// read: 'x'" -> "is not JSON (syntax error at line 3, column 7: invalid literal)".
std::string parse_problem(const std::string& message, bool one_line) {
  std::string where = between(message, "parse error at ", ":");
  if (one_line && where.rfind("line 1, ", 0) == 0) where = where.substr(8);
  std::string reason = between(message + ";", " - ", ";");
  if (reason.empty()) reason = "malformed";
  if (where.empty()) return fmt::format("is not JSON ({})", reason);
  return fmt::format("is not JSON (at {}: {})", where, reason);
}

}  // namespace

std::string json_problem(const nlohmann::json::exception& e, bool one_line) {
  const std::string message = untagged(e);
  if (dynamic_cast<const nlohmann::json::parse_error*>(&e) != nullptr) {
    return parse_problem(message, one_line);
  }
  if (e.id == 403) {  // "key 'model' not found"
    return fmt::format("has no '{}' key", between(message, "key '", "' not found"));
  }
  if (e.id == 302) {  // "type must be string, but is number"
    const std::string wanted = between(message + ";", "type must be ", ", but is ");
    const std::string found = between(message + ";", ", but is ", ";");
    if (!wanted.empty() && !found.empty()) {
      return fmt::format("has {} where {} belongs", with_article(found), with_article(wanted));
    }
  }
  if (e.id >= 304 &&
      e.id <= 306) {  // "cannot use at() with array": a key looked up in a non-object
    const size_t with = message.rfind(" with ");
    if (with != std::string::npos) {
      return fmt::format("has {} where an object belongs", with_article(message.substr(with + 6)));
    }
  }
  return fmt::format("is malformed ({})", message);
}

}  // namespace gpudays
