// TomlFields: checked getters over toml++ tables.
#include "catalog/toml_fields.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "catalog/toml_document.h"
#include "common/error.h"
#include "common/input_files.h"

namespace gpudays {
namespace {

const toml::node* as_node(const void* p) {
  return static_cast<const toml::node*>(p);
}

}  // namespace

std::string name_problem(std::string_view name) {
  if (name.size() > kMaxNameBytes) {
    return fmt::format(
        "a name of {} bytes; names are at most {} bytes", name.size(), kMaxNameBytes);
  }
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return "a name with a control character (a newline, tab or NUL) in it";
    }
  }
  return "";
}

std::shared_ptr<toml::table> parse_toml_document(const std::string& path) {
  check_input_file(path, kMaxTomlFileBytes, "gpudays' TOML files");
  try {
    return std::make_shared<toml::table>(toml::parse_file(path));
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    if (where.line == 0) {
      // toml++ says only that it could not open it: the reason from the file system (no such
      // file, permission denied).
      std::ifstream probe(path);
      const int reason = probe ? 0 : errno;
      throw InputError(reason != 0
                           ? fmt::format("{}: cannot read file: {}", path, std::strerror(reason))
                           : fmt::format("{}: cannot read file", path));
    }
    throw InputError(fmt::format("{}:{}:{}: {}", path, where.line, where.column, e.description()));
  }
}

TomlFields TomlFields::parse_file(const std::string& path) {
  const std::shared_ptr<toml::table> document = parse_toml_document(path);
  const toml::table& root = *document;
  return TomlFields(root, path, std::static_pointer_cast<const void>(document));
}

TomlFields TomlFields::parse_text(const std::string& text, const std::string& context) {
  std::shared_ptr<toml::table> document;
  try {
    document = std::make_shared<toml::table>(toml::parse(text, context));
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw InputError(
        fmt::format("{}:{}:{}: {}", context, where.line, where.column, e.description()));
  }
  const toml::table& root = *document;
  return TomlFields(root, context, std::static_pointer_cast<const void>(document));
}

TomlFields::TomlFields(const toml::table& table,
                       std::string context,
                       std::shared_ptr<const void> owner)
    : table_(&table), context_(std::move(context)), owner_(std::move(owner)) {}

void TomlFields::fail(std::string_view key, const std::string& problem) const {
  throw InputError(fmt::format("{}: {}: {}", context_, key, problem));
}

const void* TomlFields::node(std::string_view key) const {
  used_.insert(std::string(key));
  return table_->get(key);
}

bool TomlFields::has(std::string_view key) const {
  return table_->get(key) != nullptr;
}

int64_t TomlFields::get_int(std::string_view key) const {
  const toml::node* n = as_node(node(key));
  if (n == nullptr) fail(key, "missing (an integer)");
  if (auto v = n->value_exact<int64_t>()) return *v;
  fail(key, "must be an integer");
}

int64_t TomlFields::get_int_or(std::string_view key, int64_t fallback) const {
  return has(key) ? get_int(key) : (used_.insert(std::string(key)), fallback);
}

double TomlFields::get_double(std::string_view key) const {
  const toml::node* n = as_node(node(key));
  if (n == nullptr) fail(key, "missing (a number)");
  if (auto v = n->value_exact<double>()) {
    if (!std::isfinite(*v)) fail(key, fmt::format("must be a finite number, is {}", *v));
    // A subnormal (1e-320) passes any "above 0" check and then divides to infinity.
    if (std::fpclassify(*v) == FP_SUBNORMAL) {
      fail(key,
           fmt::format("{} is too small to tell from 0; give 0 or a number of at least {:g}",
                       *v,
                       std::numeric_limits<double>::min()));
    }
    return *v;
  }
  if (auto v = n->value_exact<int64_t>()) return static_cast<double>(*v);
  fail(key, "must be a number");
}

double TomlFields::get_double_or(std::string_view key, double fallback) const {
  return has(key) ? get_double(key) : (used_.insert(std::string(key)), fallback);
}

std::string TomlFields::get_string(std::string_view key) const {
  const toml::node* n = as_node(node(key));
  if (n == nullptr) fail(key, "missing (a string)");
  if (auto v = n->value_exact<std::string>()) return *v;
  fail(key, "must be a string");
}

std::string TomlFields::get_string_or(std::string_view key, std::string fallback) const {
  return has(key) ? get_string(key) : (used_.insert(std::string(key)), fallback);
}

std::string TomlFields::get_name(std::string_view key) const {
  std::string name = get_string(key);
  if (const std::string problem = name_problem(name); !problem.empty()) fail(key, problem);
  return name;
}

std::string TomlFields::get_name_or(std::string_view key, std::string fallback) const {
  return has(key) ? get_name(key) : (used_.insert(std::string(key)), fallback);
}

std::vector<std::string> TomlFields::get_name_array_or(std::string_view key) const {
  std::vector<std::string> names = get_string_array_or(key);
  for (const std::string& name : names) {
    if (const std::string problem = name_problem(name); !problem.empty()) fail(key, problem);
  }
  return names;
}

bool TomlFields::get_bool_or(std::string_view key, bool fallback) const {
  const toml::node* n = as_node(node(key));
  if (n == nullptr) return fallback;
  if (auto v = n->value_exact<bool>()) return *v;
  fail(key, "must be true or false");
}

std::optional<bool> TomlFields::get_optional_bool(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_bool_or(key, false);
}

std::vector<int64_t> TomlFields::get_int_array(std::string_view key) const {
  const toml::node* n = as_node(node(key));
  if (n == nullptr) fail(key, "missing (an array of integers)");
  const toml::array* array = n->as_array();
  if (array == nullptr) fail(key, "must be an array of integers");
  std::vector<int64_t> out;
  for (const toml::node& item : *array) {
    auto v = item.value_exact<int64_t>();
    if (!v) fail(key, "must be an array of integers");
    out.push_back(*v);
  }
  return out;
}

std::vector<std::string> TomlFields::get_string_array_or(std::string_view key) const {
  const toml::node* n = as_node(node(key));
  if (n == nullptr) return {};
  const toml::array* array = n->as_array();
  if (array == nullptr) fail(key, "must be an array of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *array) {
    auto v = item.value_exact<std::string>();
    if (!v) fail(key, "must be an array of strings");
    out.push_back(*v);
  }
  return out;
}

TomlFields TomlFields::table(std::string_view key) const {
  auto sub = table_or_none(key);
  if (!sub) fail(key, "missing table");
  return *sub;
}

std::optional<TomlFields> TomlFields::table_or_none(std::string_view key) const {
  const toml::node* n = as_node(node(key));
  if (n == nullptr) return std::nullopt;
  const toml::table* sub = n->as_table();
  if (sub == nullptr) fail(key, "must be a table");
  std::string path = context_.find(" [") == std::string::npos
                         ? fmt::format("{} [{}]", context_, key)
                         : fmt::format("{}.{}]", context_.substr(0, context_.size() - 1), key);
  return TomlFields(*sub, path, owner_);
}

void TomlFields::check_all_used(std::string_view schema_doc) const {
  for (auto&& [key, value] : *table_) {
    if (!used_.contains(key.str()))
      fail(key.str(), fmt::format("unknown key (see {})", schema_doc));
  }
}

}  // namespace gpudays
