// nlohmann_json's exceptions in words: what a malformed JSON document is missing or has wrong, as
// the end of a one-line error that names the document ("{path}: tokenizer.json has no 'model'
// key"), without the library's "[json.exception.out_of_range.403]" tags.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpudays {

// A phrase that follows the document's name: "has no 'model' key", "has a number where a string
// belongs", "is not JSON (syntax error at line 3, column 7: invalid literal)". `one_line`: the
// document is one line (of a .jsonl file), so a parse error names only its column.
std::string json_problem(const nlohmann::json::exception& e, bool one_line = false);

}  // namespace gpudays
