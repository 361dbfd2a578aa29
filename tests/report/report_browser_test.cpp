// The report opened in a real headless browser (Debian's chromium): every image of index.html
// loads, every internal link has its target and every linked file exists, with and without a
// results database; a screenshot renders. Without chromium these tests fail (CI installs it:
// scripts/install-deps.sh); set GPUDAYS_SCREENSHOT_DIR to keep the screenshots.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "process_dir.h"
#include "report/gnuplot.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const std::string path = find_executable(name);
    if (!path.empty()) return path;
  }
  return "";
}

// Runs headless chromium (as root it needs --no-sandbox) with `args`; returns its stdout.
std::string run_chromium(const fs::path& dir, const std::string& args) {
  const fs::path out = dir / "chromium.out";
  const std::string command = "timeout 120 " + chromium() +
                              " --headless --no-sandbox --disable-gpu --hide-scrollbars "
                              "--user-data-dir=" +
                              (dir / "chromium-profile").string() + " " + args + " >" +
                              out.string() + " 2>" + (dir / "chromium.err").string();
  std::system(command.c_str());
  return read_text(out);
}

// Loads DIR/index.html through tests/report/browser_check.html; returns what the check wrote.
std::string check_page(const fs::path& dir) {
  fs::copy_file(fs::path(GPUDAYS_TEST_DATA_DIR) / ".." / "report" / "browser_check.html",
                dir / "browser_check.html",
                fs::copy_options::overwrite_existing);
  const std::string dom =
      run_chromium(dir,
                   "--allow-file-access-from-files --virtual-time-budget=20000 --dump-dom file://" +
                       (dir / "browser_check.html").string());
  const size_t begin = dom.find("<pre id=\"result\">");
  if (begin == std::string::npos) return "no result; chromium wrote: " + dom.substr(0, 300);
  const size_t from = begin + std::string("<pre id=\"result\">").size();
  return dom.substr(from, dom.find("</pre>", from) - from);
}

void expect_screenshot(const fs::path& dir, const std::string& name) {
  const fs::path png = dir / (name + ".png");
  run_chromium(dir,
               "--window-size=1280,2400 --screenshot=" + png.string() + " file://" +
                   (dir / "index.html").string());
  ASSERT_TRUE(fs::is_regular_file(png)) << read_text(dir / "chromium.err");
  EXPECT_GT(fs::file_size(png), 50000u) << "a blank page?";
  if (const char* keep = std::getenv("GPUDAYS_SCREENSHOT_DIR")) {
    fs::create_directories(keep);
    fs::copy_file(png, fs::path(keep) / png.filename(), fs::copy_options::overwrite_existing);
  }
}

// The paper's figures its way are on the page beside ours, each image loaded (the check found no
// missing image) and each table's LaTeX twin linked and present (no missing file).
void expect_paper_figures(const std::string& html, const std::string& result) {
  for (const char* alt : {"memory-saving comparison, the paper's statistic",
                          "memory-saving gain over free-lunch heat-map",
                          "relative training speed bars, naive = 1",
                          "pythia-160m amortised cost vs days",
                          "vit amortised cost vs days"}) {
    EXPECT_NE(html.find(std::string("alt=\"") + alt + "\""), std::string::npos) << alt;
  }
  for (const char* id : {"training-flops", "memory-paper", "speedup-paper", "relative-speed-paper"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  for (const char* tex : {"training_flops.tex", "memory_saving_paper.tex", "summary.tex"})
    EXPECT_NE(html.find(std::string("href=\"") + tex + "\""), std::string::npos) << tex;
  EXPECT_EQ(result.find("missing"), std::string::npos) << result;
}

#define REQUIRE_CHROMIUM()                                                                        \
  ASSERT_FALSE(chromium().empty()) << "chromium is missing: install it (scripts/install-deps.sh " \
                                      "installs Debian's chromium)"

const char* kReportArgs = " --models pythia-160m,pythia-6.9b,vit --gpus a100,rtx-3090 --counts 1,8";

TEST(ReportBrowser, PageWithoutDatabaseHasEveryImageAndLink) {
  REQUIRE_CHROMIUM();
  const fs::path dir = test::process_temp_dir().fresh_dir("browser_plain");
  const fs::path page = dir / "report";
  const auto r =
      test::run_gpudays("report --out " + page.string() + " --db /nonexistent.db" + kReportArgs);
  // --db given but missing is an error; without --db and without ./gpudays.db none is used.
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto plain = test::run_gpudays("report --out " + page.string() + kReportArgs);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string result = check_page(page);
  EXPECT_EQ(result.substr(0, 2), "OK") << result;
  EXPECT_NE(result.find("internal-links 1"), std::string::npos) << result;  // the contents
  EXPECT_EQ(result.find("images 0 "), std::string::npos) << result;
  const std::string html = read_text(page / "index.html");
  EXPECT_NE(html.find("No measurements yet"), std::string::npos);
  expect_paper_figures(html, result);
  expect_screenshot(page, "report-plain");
}

TEST(ReportBrowser, PageWithDatabaseHasEveryImageAndLink) {
  REQUIRE_CHROMIUM();
  const fs::path dir = test::process_temp_dir().fresh_dir("browser_db");
  const std::string db_path = (dir / "trials.db").string();
  {
    ResultsDb db = ResultsDb::open({db_path, /*read_only=*/false, &test::catalog()});
    // A model of a file, not the catalog's: its trials are re-derived from the file it stored.
    ModelSpec own = test::catalog().model("pythia-160m");
    own.name = "not-in-the-catalog";
    own.arch.n_layers = 10;
    db.store_model(own);
    const ModelSpec* models[] = {&test::catalog().model("pythia-160m"), &own};
    for (const ModelSpec* model : models) {
      TrialRecord t;
      t.model = model->name;
      t.gpu = "a100-80gb-sxm";
      t.cluster = {1, 8};
      t.config.micro_batch_size = 8;
      t.config.grad_acc_steps = 16;
      test::set_measured_step(t, 1.95);  // pythia-160m: 3.2 days
      test::derive_figures(t, *model);
      t.predicted_step_time_s = 1.6;
      t.created_at = "2026-11-30T07:00:00Z";
      db.insert(t);
    }
  }
  const fs::path page = dir / "report";
  const auto r =
      test::run_gpudays("report --out " + page.string() + " --db " + db_path + kReportArgs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string result = check_page(page);
  EXPECT_EQ(result.substr(0, 2), "OK") << result;
  const std::string html = read_text(page / "index.html");
  EXPECT_EQ(html.find("No measurements yet"), std::string::npos);
  EXPECT_NE(html.find("not-in-the-catalog"), std::string::npos);  // kept, not dropped
  EXPECT_NE(html.find("3.2<br>measured"), std::string::npos);
  expect_paper_figures(html, result);
  expect_screenshot(page, "report-db");
}

// The check itself catches what it is for: a missing image, a link without its target and a
// linked file that does not exist.
TEST(ReportBrowser, CheckFailsOnAMissingImageOrABrokenLink) {
  REQUIRE_CHROMIUM();
  const fs::path dir = test::process_temp_dir().fresh_dir("browser_broken");
  std::ofstream(dir / "index.html")
      << "<!DOCTYPE html><html><body><h2 id=\"here\">x</h2><a href=\"#here\">ok</a>"
         "<a href=\"#nowhere\">broken</a><a href=\"gone.svg\">file</a>"
         "<img src=\"missing.png\" alt=\"lost plot\"></body></html>\n";
  const std::string result = check_page(dir);
  EXPECT_EQ(result.substr(0, 4), "FAIL") << result;
  EXPECT_NE(result.find("missing image: lost plot"), std::string::npos) << result;
  EXPECT_NE(result.find("broken link: #nowhere"), std::string::npos) << result;
  EXPECT_NE(result.find("missing file: gone.svg"), std::string::npos) << result;
}

}  // namespace
}  // namespace gpudays
