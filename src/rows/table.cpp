// Table printing.
#include "rows/table.h"

#include <algorithm>
#include <cctype>

namespace gpudays {
namespace {

bool looks_numeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' ||
                        s[0] == '+' || s[0] == '.');
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void Table::print(std::ostream& out) const {
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t i = 0; i < headers_.size(); ++i) width[i] = headers_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto emit = [&](const std::vector<std::string>& cells, bool header) {
    for (size_t i = 0; i < headers_.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      const size_t pad = width[i] - cell.size();
      const bool right = !header && looks_numeric(cell);
      if (i > 0) out << "  ";
      if (right)
        out << std::string(pad, ' ') << cell;
      else
        out << cell << (i + 1 < headers_.size() ? std::string(pad, ' ') : "");
    }
    out << '\n';
  };
  emit(headers_, true);
  for (const auto& row : rows_) emit(row, false);
}

void Table::print_csv(std::ostream& out) const {
  auto emit = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out << (i > 0 ? "," : "") << csv_cell(cells[i]);
    out << '\n';
  };
  emit(headers_);
  for (const auto& row : rows_) emit(row);
}

}  // namespace gpudays
