// Typed, checked access to one TOML table: every failure names the file, the table and the key,
// and check_all_used() rejects keys nobody read (typos in user-written files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace gpudays {

// Names (of a model, a GPU and its aliases, a cluster and its partitions) are for look-up and
// display, copied into every row that shows one: at most this many bytes, from a file or a flag.
inline constexpr size_t kMaxNameBytes = 256;
// Empty for a name within the bound and without control characters (which would break a table
// row or a script line); else the problem, without the name itself.
std::string name_problem(std::string_view name);

class TomlFields {
 public:
  // Parses `path`; throws InputError with the line of a syntax error.
  static TomlFields parse_file(const std::string& path);
  // Parses TOML text; `context` names it in errors as a path would.
  static TomlFields parse_text(const std::string& text, const std::string& context);

  TomlFields(const toml::table& table, std::string context, std::shared_ptr<const void> owner);

  bool has(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  int64_t get_int_or(std::string_view key, int64_t fallback) const;
  double get_double(std::string_view key) const;  // integers are accepted
  double get_double_or(std::string_view key, double fallback) const;
  std::string get_string(std::string_view key) const;
  std::string get_string_or(std::string_view key, std::string fallback) const;
  // A string that is a name: as get_string, and at most kMaxNameBytes.
  std::string get_name(std::string_view key) const;
  std::string get_name_or(std::string_view key, std::string fallback) const;
  std::vector<std::string> get_name_array_or(std::string_view key) const;
  bool get_bool_or(std::string_view key, bool fallback) const;
  std::optional<bool> get_optional_bool(std::string_view key) const;  // nullopt when absent
  std::vector<int64_t> get_int_array(std::string_view key) const;
  std::vector<std::string> get_string_array_or(std::string_view key) const;
  TomlFields table(std::string_view key) const;
  std::optional<TomlFields> table_or_none(std::string_view key) const;

  // Throws InputError naming any key of this table that no getter asked for, and the document
  // that lists the valid ones.
  void check_all_used(std::string_view schema_doc = "docs/catalog.md") const;
  const std::string& context() const { return context_; }
  [[noreturn]] void fail(std::string_view key, const std::string& problem) const;

 private:
  const void* node(std::string_view key) const;  // toml::node*, or nullptr
  const toml::table* table_;
  std::string context_;                // "configs/models/x.toml [arch]"
  std::shared_ptr<const void> owner_;  // keeps the parsed document alive
  mutable std::set<std::string, std::less<>> used_;
};

}  // namespace gpudays
