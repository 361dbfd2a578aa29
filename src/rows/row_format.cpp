// The row writers: table, JSON, JSONL, CSV and Markdown over a RowSet.
#include "rows/row_format.h"

#include <cmath>

#include <fmt/format.h>

#include "common/build_info.h"
#include "common/error.h"
#include "common/json_text.h"
#include "common/units.h"
#include "rows/table.h"

namespace gpudays {
namespace {

// CSV: flags as true/false, reals in their shortest exact form, null as an empty field.
std::string plain_text(const Cell& cell) {
  struct Visit {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return std::isfinite(v) ? fmt::format("{}", v) : ""; }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visit{}, cell);
}

std::string display_text(const Cell& cell, Display display) {
  if (std::holds_alternative<std::monostate>(cell)) return "-";
  if (const bool* b = std::get_if<bool>(&cell)) return *b ? "yes" : "no";
  const double* real = std::get_if<double>(&cell);
  const int64_t* integer = std::get_if<int64_t>(&cell);
  if (real == nullptr && integer == nullptr) return plain_text(cell);
  const double v = real != nullptr ? *real : static_cast<double>(*integer);
  switch (display) {
    case Display::kFixed1:
      return fmt::format("{:.1f}", v);
    case Display::kFixed3:
      return fmt::format("{:.3f}", v);
    case Display::kDays:
      return v != 0.0 && std::abs(v) < 0.1 ? fmt::format("{:.2g}", v) : fmt::format("{:.1f}", v);
    case Display::kPercent:
      return fmt::format("{:.1f}", 100 * v);
    case Display::kGib:
      return fmt::format("{:.1f}", v / kGiB);
    case Display::kCount:
      return format_count(std::llround(v));
    default:
      return real != nullptr ? fmt::format("{:.4g}", v) : std::to_string(*integer);
  }
}

std::string display_header(const std::string& name, Display display) {
  if (display == Display::kPercent) return name + "_%";
  if (display == Display::kGib && name.ends_with("_bytes")) {
    std::string gib = name;
    gib.replace(gib.size() - 6, 6, "_gib");
    return gib;
  }
  return name;
}

bool is_number(const Cell& cell) {
  return std::holds_alternative<int64_t>(cell) || std::holds_alternative<double>(cell);
}

std::vector<size_t> shown_columns(const RowSet& rows) {
  std::vector<size_t> shown;
  for (size_t i = 0; i < rows.displays.size(); ++i) {
    if (rows.displays[i] != Display::kHidden) shown.push_back(i);
  }
  return shown;
}

std::string markdown_cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

void write_table(std::ostream& out, const RowSet& rows) {
  const std::vector<size_t> shown = shown_columns(rows);
  std::vector<std::string> headers;
  for (size_t i : shown) headers.push_back(display_header(rows.names[i], rows.displays[i]));
  Table table(headers);
  for (const auto& row : rows.rows) {
    std::vector<std::string> cells;
    for (size_t i : shown) cells.push_back(display_text(row[i], rows.displays[i]));
    table.add_row(std::move(cells));
  }
  table.print(out);
}

void write_csv(std::ostream& out, const RowSet& rows) {
  Table table(rows.names);
  for (const auto& row : rows.rows) {
    std::vector<std::string> cells;
    for (const Cell& c : row) cells.push_back(plain_text(c));
    table.add_row(std::move(cells));
  }
  table.print_csv(out);
}

void write_markdown(std::ostream& out, const RowSet& rows) {
  const std::vector<size_t> shown = shown_columns(rows);
  out << "|";
  for (size_t i : shown) {
    out << " " << markdown_cell(display_header(rows.names[i], rows.displays[i])) << " |";
  }
  out << "\n|";
  for (size_t i : shown) {
    const bool numeric = !rows.rows.empty() && is_number(rows.rows.front()[i]);
    out << (numeric ? " ---: |" : " --- |");
  }
  out << "\n";
  for (const auto& row : rows.rows) {
    out << "|";
    for (size_t i : shown)
      out << " " << markdown_cell(display_text(row[i], rows.displays[i])) << " |";
    out << "\n";
  }
}

}  // namespace

RowFormat parse_row_format(const std::string& text) {
  if (text == "table") return RowFormat::kTable;
  if (text == "json") return RowFormat::kJson;
  if (text == "jsonl") return RowFormat::kJsonl;
  if (text == "csv") return RowFormat::kCsv;
  if (text == "markdown") return RowFormat::kMarkdown;
  throw InputError(
      fmt::format("unknown format '{}'; valid: {}", text, join_choices(row_format_names())));
}

const std::vector<std::string>& row_format_names() {
  static const std::vector<std::string> kNames = {"table", "json", "jsonl", "csv", "markdown"};
  return kNames;
}

nlohmann::json cell_json(const Cell& cell) {
  struct Visit {
    nlohmann::json operator()(std::monostate) const { return nullptr; }
    nlohmann::json operator()(bool b) const { return b; }
    nlohmann::json operator()(int64_t v) const { return v; }
    nlohmann::json operator()(double v) const {
      return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    }
    nlohmann::json operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visit{}, cell);
}

nlohmann::json rows_json(const RowSet& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : rows.rows) {
    nlohmann::json j = nlohmann::json::object();
    for (size_t i = 0; i < rows.names.size(); ++i) j[rows.names[i]] = cell_json(row[i]);
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json json_document(const std::string& row_kind) {
  nlohmann::json doc = {{"schema_version", kOutputSchemaVersion},
                        {"build", {{"version", kVersion}, {"git_commit", git_commit()}}}};
  if (!row_kind.empty()) doc["row_kind"] = row_kind;
  return doc;
}

void write_rows(std::ostream& out, const RowSet& rows, RowFormat format) {
  switch (format) {
    case RowFormat::kTable:
      write_table(out, rows);
      return;
    case RowFormat::kCsv:
      write_csv(out, rows);
      return;
    case RowFormat::kMarkdown:
      write_markdown(out, rows);
      return;
    case RowFormat::kJsonl:
      for (const nlohmann::json& row : rows_json(rows)) out << json_text(row) << "\n";
      return;
    case RowFormat::kJson: {
      nlohmann::json doc = json_document(rows.kind);
      doc["rows"] = rows_json(rows);
      out << json_text(doc, 2) << "\n";
      return;
    }
  }
}

}  // namespace gpudays
