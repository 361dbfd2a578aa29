// A row's method-set columns, one per method field (search_space/method_fields.h): a flag as a
// flag cell, a choice as its name. The row kinds' column lists (plan, trial) splice them in
// after their "methods" column.
#pragma once

#include <string>
#include <vector>

#include "rows/row_format.h"
#include "search_space/method_fields.h"

namespace gpudays {

// `methods` reads the row's method set: [](const PlanRow& r) -> auto& { return r.config.methods; }
template <typename Row, typename Methods>
std::vector<Column<Row>> method_columns(Methods methods) {
  std::vector<Column<Row>> columns;
  for (const MethodField& f : method_fields()) {
    columns.push_back({std::string(f.name), [&f, methods](const Row& r) {
                         const MethodSet& m = methods(r);
                         return f.kind() == MethodKind::kFlag ? Cell{f.flag(m)} : Cell{f.text(m)};
                       }});
  }
  return columns;
}

// `columns` with the method columns spliced in after the column named `after`.
template <typename Row, typename Methods>
std::vector<Column<Row>> with_method_columns(std::vector<Column<Row>> columns,
                                             const std::string& after,
                                             Methods methods) {
  auto at = columns.begin();
  while (at != columns.end() && at->name != after) ++at;
  const std::vector<Column<Row>> fields = method_columns<Row>(methods);
  columns.insert(at == columns.end() ? at : at + 1, fields.begin(), fields.end());
  return columns;
}

}  // namespace gpudays
