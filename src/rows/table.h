// A plain text table (aligned columns) and CSV writer for command output.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gpudays {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::ostream& out) const;      // aligned, numbers right-aligned
  void print_csv(std::ostream& out) const;  // RFC 4180 quoting
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpudays
