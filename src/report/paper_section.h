// The paper comparison as rows and as a report section: the reference paper's published training
// times beside gpudays' for the same cell, the MFU each published time implies, and the cells that
// are physically impossible. One column list, shared by `gpudays paper` and the report.
#pragma once

#include <vector>

#include "advise/paper_compare.h"
#include "report/report_doc.h"
#include "rows/row_format.h"

namespace gpudays {

const std::vector<Column<PaperCell>>& paper_columns();

// "## The paper's numbers beside ours": a table of the cells, the impossible ones' reasons and
// every cell's citation. A note instead of a table when there are no cells.
void add_paper_section(Document& doc, const std::vector<PaperCell>& cells);

}  // namespace gpudays
