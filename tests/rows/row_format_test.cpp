// The row writers: one column list printed as a table, JSON, JSONL, CSV and Markdown, with numbers
// as numbers (ratios as fractions) and the schema version and build in JSON.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "common/build_info.h"
#include "common/error.h"
#include "rows/row_format.h"

namespace gpudays {
namespace {

struct Sample {
  std::string name;
  double mfu = 0.0;
  int64_t bytes = 0;
  bool fits = false;
  double missing = 0.0;  // < 0: not applicable
};

const std::vector<Column<Sample>>& sample_columns() {
  static const std::vector<Column<Sample>> kColumns = {
      {"name", [](const Sample& s) { return Cell{s.name}; }, Display::kPlain},
      {"mfu", [](const Sample& s) { return Cell{s.mfu}; }, Display::kPercent},
      {"peak_memory_bytes", [](const Sample& s) { return Cell{s.bytes}; }, Display::kGib},
      {"fits", [](const Sample& s) { return Cell{s.fits}; }, Display::kPlain},
      {"ratio", [](const Sample& s) { return s.missing < 0 ? Cell{} : Cell{s.missing}; }},
  };
  return kColumns;
}

std::string written(RowFormat format) {
  const std::vector<Sample> rows = {{"a, \"quoted\"", 0.5, int64_t{3} << 30, true, 1.25},
                                    {"b|c", 0.1822, 1024, false, -1.0}};
  std::ostringstream out;
  write_rows(out, make_row_set("sample_row", sample_columns(), rows), format);
  return out.str();
}

TEST(RowFormat, CsvCarriesPlainNumbersAndQuotes) {
  EXPECT_EQ(written(RowFormat::kCsv),
            "name,mfu,peak_memory_bytes,fits,ratio\n"
            "\"a, \"\"quoted\"\"\",0.5,3221225472,true,1.25\n"
            "b|c,0.1822,1024,false,\n");
}

TEST(RowFormat, JsonIsADocumentWithSchemaVersionAndBuild) {
  const auto j = nlohmann::json::parse(written(RowFormat::kJson));
  EXPECT_EQ(j["schema_version"], kOutputSchemaVersion);
  EXPECT_EQ(j["build"]["version"], kVersion);
  EXPECT_EQ(j["build"]["git_commit"], git_commit());
  EXPECT_EQ(j["row_kind"], "sample_row");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["mfu"], 0.5);
  EXPECT_EQ(j["rows"][0]["peak_memory_bytes"], int64_t{3} << 30);
  EXPECT_EQ(j["rows"][0]["fits"], true);
  EXPECT_TRUE(j["rows"][1]["ratio"].is_null());
}

TEST(RowFormat, JsonlIsOneObjectPerLine) {
  std::istringstream lines(written(RowFormat::kJsonl));
  std::string line;
  std::vector<nlohmann::json> rows;
  while (std::getline(lines, line)) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["name"], "b|c");
  EXPECT_DOUBLE_EQ(rows[1]["mfu"].get<double>(), 0.1822);
}

TEST(RowFormat, TableAndMarkdownShowTheDisplayedColumns) {
  const std::string table = written(RowFormat::kTable);
  EXPECT_NE(table.find("mfu_%"), std::string::npos) << table;
  EXPECT_NE(table.find("peak_memory_gib"), std::string::npos) << table;
  EXPECT_NE(table.find("50.0"), std::string::npos) << table;
  EXPECT_NE(table.find("3.0"), std::string::npos) << table;
  EXPECT_EQ(table.find("ratio"), std::string::npos) << table;  // hidden
  const std::string md = written(RowFormat::kMarkdown);
  EXPECT_EQ(md.rfind("| name | mfu_% | peak_memory_gib | fits |\n| --- | ---: | ---: | --- |\n", 0),
            0u)
      << md;
  EXPECT_NE(md.find("| b\\|c | 18.2 | 0.0 | no |"), std::string::npos) << md;
}

// Days below 0.1 keep two significant digits (a six-minute CPU run is 0.0042 days, not 0.0).
TEST(RowFormat, ShortRunsInDaysDoNotReadZero) {
  const std::vector<Column<double>> columns = {
      {"training_days", [](const double& d) { return Cell{d}; }, Display::kDays}};
  std::ostringstream out;
  write_rows(out,
             make_row_set("days", columns, std::vector<double>{0.0041667, 12.34, 0.0}),
             RowFormat::kMarkdown);
  EXPECT_NE(out.str().find("| 0.0042 |"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("| 12.3 |"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("| 0.0 |"), std::string::npos) << out.str();
}

TEST(RowFormat, UnknownFormatNamesTheChoices) {
  EXPECT_EQ(parse_row_format("markdown"), RowFormat::kMarkdown);
  try {
    parse_row_format("xml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("table, json, jsonl, csv or markdown"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpudays
