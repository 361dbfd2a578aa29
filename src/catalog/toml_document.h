// Parsing a TOML file into a document, for the loaders that walk it with TomlFields: a file that
// cannot be read or parsed is one InputError naming the file, line and column.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <toml++/toml.h>

namespace gpudays {

// The largest TOML file gpudays reads: the parser holds several times a file's size (a 100 MB
// model file took 420 MB), and no file of gpudays' comes near this.
inline constexpr std::uintmax_t kMaxTomlFileBytes = std::uintmax_t{4} << 20;

std::shared_ptr<toml::table> parse_toml_document(const std::string& path);

}  // namespace gpudays
