// Rows printed in every output format from one column list per row kind (plan, trial, cost, model,
// GPU row): a column is a name carrying its unit and a getter returning a number, a flag, a string
// or nothing. Each row kind's columns live in one place (rows/cost_rows.h; the command line's
// plan_rows, trial_rows, cmd_catalog); this file writes any of them as a table, JSON, JSONL,
// CSV or Markdown.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudays {

// The version of the rows' column lists and of the JSON documents around them. Raise it when a
// column is renamed or removed or changes meaning (adding one does not).
inline constexpr int64_t kOutputSchemaVersion = 1;

enum class RowFormat { kTable, kJson, kJsonl, kCsv, kMarkdown };
RowFormat parse_row_format(const std::string& text);  // throws InputError
const std::vector<std::string>& row_format_names();   // table, json, jsonl, csv, markdown

// One value: null (not applicable), a flag, an integer, a real or text. CSV and JSON carry it
// as it is: ratios as fractions (mfu 0.5, not "50%"), sizes in bytes, times in seconds.
using Cell = std::variant<std::monostate, bool, int64_t, double, std::string>;

// How the table and Markdown show a column; CSV, JSON and JSONL always carry the plain value.
enum class Display {
  kHidden,   // machine formats only
  kPlain,    // as it is (flags as yes/no, reals to 4 significant digits)
  kFixed1,   // 12.3
  kFixed3,   // 0.123
  kDays,     // 12.3; below 0.1 two significant digits (0.0042), so short runs do not read 0.0
  kCount,    // 1,011,781,632 (rounded)
  kPercent,  // a fraction shown as 12.3, under "NAME_%"
  kGib,      // bytes shown as GiB to 0.1, under NAME with "_bytes" as "_gib"
};

template <typename Row>
struct Column {
  std::string name;  // snake_case with its unit: step_time_s, peak_memory_bytes, mfu (fraction)
  std::function<Cell(const Row&)> value;
  Display display = Display::kHidden;
};

// Rows already turned into cells, ready for any writer.
struct RowSet {
  std::string kind;  // "plan_row", "trial_row", "cost_row"
  std::vector<std::string> names;
  std::vector<Display> displays;
  std::vector<std::vector<Cell>> rows;
};

template <typename Row>
RowSet make_row_set(std::string kind,
                    const std::vector<Column<Row>>& columns,
                    const std::vector<Row>& rows) {
  RowSet set{std::move(kind), {}, {}, {}};
  for (const Column<Row>& c : columns) {
    set.names.push_back(c.name);
    set.displays.push_back(c.display);
  }
  for (const Row& row : rows) {
    std::vector<Cell>& cells = set.rows.emplace_back();
    for (const Column<Row>& c : columns) cells.push_back(c.value(row));
  }
  return set;
}

// One row as a JSON object of every column.
template <typename Row>
nlohmann::json row_object(const std::vector<Column<Row>>& columns, const Row& row);

nlohmann::json cell_json(const Cell& cell);
nlohmann::json rows_json(const RowSet& rows);  // an array of objects

// What every JSON document starts with: {"schema_version", "build": {"version", "git_commit"},
// "row_kind"} (none when empty: a summary, not rows); commands add their own fields (rows, best).
nlohmann::json json_document(const std::string& row_kind);

// The rows in `format`: a table (the columns with a display), a JSON document with "rows", one
// JSON object per line, CSV (RFC 4180, a header line) or a Markdown table.
void write_rows(std::ostream& out, const RowSet& rows, RowFormat format);

template <typename Row>
nlohmann::json row_object(const std::vector<Column<Row>>& columns, const Row& row) {
  nlohmann::json j = nlohmann::json::object();
  for (const Column<Row>& c : columns) j[c.name] = cell_json(c.value(row));
  return j;
}

}  // namespace gpudays
