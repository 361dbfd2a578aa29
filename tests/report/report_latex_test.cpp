// The report's LaTeX tables are well-formed without compiling them (balanced braces, the
// special characters escaped, one line per row: one per row of the CSV for the training-FLOPs
// table), every table of the page has one, and --whole-days prints the days tables as the paper.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "process_dir.h"
#include "report/gnuplot.h"
#include "report/report_latex.h"
#include "report/report_tables_paper.h"
#include "test_util.h"

namespace gpudays {
namespace {

namespace fs = std::filesystem;

// What is wrong with a LaTeX table, or "" when nothing is: braces that do not balance, a
// special character (_ % & #) not escaped outside comment lines.
std::string latex_problems(const std::string& tex) {
  int depth = 0;
  size_t line_start = 0;
  for (size_t i = 0; i < tex.size(); ++i) {
    if (i == line_start && tex[i] == '%') {  // a comment line
      i = tex.find('\n', i);
      if (i == std::string::npos) break;
      line_start = i + 1;
      continue;
    }
    const char c = tex[i];
    if (c == '\n') line_start = i + 1;
    const bool escaped = i > 0 && tex[i - 1] == '\\';
    if (escaped) continue;
    if (c == '{') ++depth;
    if (c == '}' && --depth < 0) return "a '}' without its '{' at byte " + std::to_string(i);
    if (c == '_' || c == '%' || c == '&' || c == '#') {
      // '&' separates cells; only inside tabular rows, never next to text that needs it escaped.
      if (c == '&' && i > 0 && tex[i - 1] == ' ' && i + 1 < tex.size() && tex[i + 1] == ' ')
        continue;
      return std::string("unescaped '") + c + "' at byte " + std::to_string(i);
    }
  }
  return depth == 0 ? "" : "unbalanced braces: " + std::to_string(depth) + " left open";
}

// The lines that end a table row ("... \\"), header included.
std::vector<std::string> row_lines(const std::string& tex) {
  std::vector<std::string> rows;
  size_t from = 0;
  for (size_t at = tex.find('\n'); at != std::string::npos; at = tex.find('\n', from)) {
    const std::string line = tex.substr(from, at - from);
    if (line.ends_with(" \\\\")) rows.push_back(line);
    from = at + 1;
  }
  return rows;
}

// Every row line has `columns` cells: columns - 1 separators " & " (an escaped one is "\& ").
void expect_columns(const std::string& tex, size_t columns) {
  for (const std::string& line : row_lines(tex)) {
    size_t separators = 0;
    for (size_t at = line.find(" & "); at != std::string::npos; at = line.find(" & ", at + 1))
      ++separators;
    EXPECT_EQ(separators + 1, columns) << line;
  }
}

TEST(ReportLatex, EscapesSpecialCharactersAndKeepsOneLinePerRow) {
  DocTable t;
  t.name = "odd_table";
  t.headers = {"model", "a_b", "50%"};
  t.rows = {{"x&y", "{braces}", "#1"}, {kNothingFits, "two\nlines", "3 \u00d7 a100 ~ $5^2"}};
  t.caption = "100% of the time_ & {more} \\ here";
  const std::string tex = render_latex(t);
  EXPECT_EQ(latex_problems(tex), "") << tex;
  EXPECT_EQ(row_lines(tex).size(), 1u + t.rows.size()) << tex;
  expect_columns(tex, t.headers.size());
  for (const char* want : {"a\\_b",
                           "50\\%",
                           "x\\&y",
                           "\\{braces\\}",
                           "\\#1",
                           "---",
                           "$\\times$",
                           "\\textasciitilde{}",
                           "\\$5\\textasciicircum{}2",
                           "\\textbackslash{}",
                           "\\label{tab:odd-table}",
                           "\\begin{tabular}[c]{@{}c@{}}two\\\\lines\\end{tabular}"}) {
    EXPECT_NE(tex.find(want), std::string::npos) << want << "\n" << tex;
  }
  // The checker catches what it is for.
  EXPECT_NE(latex_problems("\\begin{tabular}{l}\na_b \\\\\n\\end{tabular}\n"), "");
  EXPECT_NE(latex_problems("{50%}"), "");
  EXPECT_NE(latex_problems("\\caption{open"), "");
}

TEST(ReportLatex, WholeDaysRoundAsThePaperPrints) {
  TrainingTime t;
  t.fits = true;
  t.training_days = 12.5;
  t.training_days_range = TimeRange{9.46, 14.5};
  EXPECT_EQ(predicted_days_cell(t), "12.5\n(9.5-14.5)");
  EXPECT_EQ(predicted_days_cell(t, DaysRounding::kWholeDays), "13\n(9-15)");
  EXPECT_EQ(days_text(0.4, DaysRounding::kWholeDays), "0");
  t.fits = false;
  EXPECT_EQ(predicted_days_cell(t, DaysRounding::kWholeDays), kNothingFits);
}

size_t csv_data_rows(const std::string& csv) {
  size_t lines = 0;
  for (char c : csv) lines += c == '\n' ? 1 : 0;
  return lines - 1;  // the header
}

TEST(ReportLatex, EveryTableOfTheReportHasAWellFormedTexFile) {
  if (find_executable("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path dir = fs::path(test::process_temp_dir().fresh_dir("latex")) / "report";
  const auto r = test::run_gpudays("report --whole-days --out " + dir.string() +
                                   " --models pythia-160m,pythia-12b --gpus a100,rtx-3090 "
                                   "--counts 1,8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = test::read_file((dir / "index.html").string());
  size_t tables = 0, tex_files = 0;
  for (size_t at = html.find("<table"); at != std::string::npos; at = html.find("<table", at + 1))
    ++tables;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".tex") continue;
    ++tex_files;
    const std::string tex = test::read_file(entry.path().string());
    EXPECT_EQ(latex_problems(tex), "") << entry.path();
    EXPECT_NE(html.find("href=\"" + entry.path().filename().string() + "\""), std::string::npos)
        << entry.path() << " is not linked from its table";
  }
  EXPECT_EQ(tex_files, tables);
  EXPECT_EQ(tables, 15u + 2u);  // 15 tables (none of measurements without a database) + a cost
                                // table per model
  // The training-FLOPs table: one line per row of its CSV (one per model), plus the header.
  const std::string flops_tex = test::read_file((dir / "training_flops.tex").string());
  const std::string flops_csv = test::read_file((dir / "training_flops.csv").string());
  EXPECT_EQ(csv_data_rows(flops_csv), 2u);
  EXPECT_EQ(row_lines(flops_tex).size(), 1u + csv_data_rows(flops_csv)) << flops_tex;
  expect_columns(flops_tex, 5);
  // --whole-days: the days tables print whole days (no "." in a row), the CSV every digit.
  for (const char* name : {"training_days_optimal.tex", "training_days_naive.tex"}) {
    const std::string days_tex = test::read_file((dir / name).string());
    EXPECT_NE(days_tex.find("whole days"), std::string::npos) << name;
    const std::vector<std::string> rows = row_lines(days_tex);
    ASSERT_EQ(rows.size(), 3u) << days_tex;
    for (size_t i = 1; i < rows.size(); ++i)
      EXPECT_EQ(rows[i].find('.'), std::string::npos) << rows[i];
  }
  EXPECT_NE(test::read_file((dir / "training_days.csv").string()).find('.'), std::string::npos);
}

}  // namespace
}  // namespace gpudays
