// LaTeX twins of the report's tables: each DocTable with a name becomes NAME.tex next to the
// CSV files, a `table` environment with a plain `tabular` (no packages needed), for pasting into
// a paper as the reference's scripts do with great_tables' as_latex().
#pragma once

#include <string>

#include "report/report_doc.h"

namespace gpudays {

// Text safe inside LaTeX: the ten special characters escaped (\ { } _ % & # $ ^ ~), < and > as
// text symbols, and the report's non-ASCII symbols spelled in LaTeX ("—" as ---, "×" as $\times$).
std::string latex_escape(const std::string& text);

// `\begin{table}` ... `\end{table}`: the caption, `\label{tab:NAME}`, one header row and one line
// ending in `\\` per table row; a cell with line breaks becomes a nested one-column tabular.
std::string render_latex(const DocTable& table);

}  // namespace gpudays
