// LaTeX rendering of a DocTable.
#include "report/report_latex.h"

#include <cctype>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpudays {
namespace {

struct Spelling {
  const char* text;
  const char* latex;
};

// Every byte sequence that needs another spelling; the first match at a position wins.
constexpr Spelling kSpellings[] = {
    {"\\", "\\textbackslash{}"},
    {"{", "\\{"},
    {"}", "\\}"},
    {"_", "\\_"},
    {"%", "\\%"},
    {"&", "\\&"},
    {"#", "\\#"},
    {"$", "\\$"},
    {"^", "\\textasciicircum{}"},
    {"~", "\\textasciitilde{}"},
    {"<", "\\textless{}"},
    {">", "\\textgreater{}"},
    {"\u2014", "---"},
    {"\u2013", "--"},
    {"\u00d7", "$\\times$"},
    {"\u2082", "$_2$"},
    {"\u00b2", "$^2$"},
    {"\u2264", "$\\leq$"},
    {"\u2265", "$\\geq$"},
};

std::string latex_cell(const std::string& text) {
  if (text.find('\n') == std::string::npos) return latex_escape(text);
  std::vector<std::string> lines;
  size_t from = 0;
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', from)) {
    lines.push_back(latex_escape(text.substr(from, at - from)));
    from = at + 1;
  }
  lines.push_back(latex_escape(text.substr(from)));
  return fmt::format("\\begin{{tabular}}[c]{{@{{}}c@{{}}}}{}\\end{{tabular}}",
                     fmt::join(lines, "\\\\"));
}

std::string latex_row(const std::vector<std::string>& cells) {
  std::vector<std::string> out;
  for (const std::string& c : cells) out.push_back(latex_cell(c));
  return fmt::format("{} \\\\\n", fmt::join(out, " & "));
}

// A \label key: letters, digits, '-' and ':'; anything else becomes '-'.
std::string label(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == ':' ? c : '-';
  return out;
}

}  // namespace

std::string latex_escape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    bool spelled = false;
    for (const Spelling& s : kSpellings) {
      const std::string_view from(s.text);
      if (text.compare(i, from.size(), from) == 0) {
        out += s.latex;
        i += from.size();
        spelled = true;
        break;
      }
    }
    if (!spelled) out += text[i++];
  }
  return out;
}

std::string render_latex(const DocTable& table) {
  std::string columns = "l";
  for (size_t c = 1; c < table.headers.size(); ++c) columns += "r";
  std::string out = fmt::format(
      "% written by gpudays report: the header, then one line per row of the table in index.html\n"
      "\\begin{{table}}[htbp]\n\\centering\n\\caption{{{}}}\n\\label{{tab:{}}}\n"
      "\\begin{{tabular}}{{{}}}\n\\hline\n",
      latex_escape(table.caption),
      label(table.name),
      columns);
  out += latex_row(table.headers);
  out += "\\hline\n";
  for (const std::vector<std::string>& row : table.rows) out += latex_row(row);
  out += "\\hline\n\\end{tabular}\n\\end{table}\n";
  return out;
}

}  // namespace gpudays
