// Parsing a TOML file into a document, for the loaders that walk it with TomlFields: a file that
// cannot be read or parsed is one InputError naming the file, line and column.
#pragma once

#include <memory>
#include <string>

#include <toml++/toml.h>

namespace gpudays {

std::shared_ptr<toml::table> parse_toml_document(const std::string& path);

}  // namespace gpudays
