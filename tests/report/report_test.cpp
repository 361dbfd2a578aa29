// Report tests: generation writes every file, the plots are real images (PNG signature, a
// non-trivial size, SVG markup), captions name their sources, measurements get their own plot,
// a missing gnuplot is a clear error, and the HTML / Markdown renderers escape text.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "process_dir.h"
#include "report/gnuplot.h"
#include "report/report.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

namespace fs = std::filesystem;
using test::catalog;

std::string fresh_dir(const std::string& name) {
  const fs::path dir = test::process_temp_dir().path() / name;  // removed at the process's exit
  fs::remove_all(dir);
  return dir.string();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ReportData small_report_data() {
  ReportDataOptions options;
  options.models = {&catalog().model("pythia-160m"), &catalog().model("pythia-2.8b")};
  options.cost.assumptions = load_cost_assumptions(cost_assumptions_path(catalog().config_dir()));
  for (const char* gpu : {"rtx-3090", "a100"}) {
    for (int64_t n : {1, 8}) options.hardware.push_back({&catalog().gpu(gpu), n});
  }
  options.detail_gpu_count = 8;
  return collect_report_data(options);
}

ReportOutputOptions output_to(const std::string& dir) {
  ReportOutputOptions o;
  o.out_dir = dir;
  o.generated_by = "gpudays test";
  o.generated_at = "today";
  o.config_dir = catalog().config_dir();
  return o;
}

void expect_real_png(const fs::path& path) {
  const std::string bytes = read_file(path);
  ASSERT_GE(bytes.size(), 8u) << path;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << path;
  EXPECT_GT(bytes.size(), 10000u) << path << ": suspiciously small for a plot";
}

#define SKIP_WITHOUT_GNUPLOT() \
  if (find_executable("gnuplot").empty()) GTEST_SKIP() << "gnuplot not installed"

// No staging directory (a report being built, `.staging` in its name) is left in `parent`.
void expect_no_staging_in(const fs::path& parent) {
  for (const auto& entry : fs::directory_iterator(parent)) {
    EXPECT_EQ(entry.path().filename().string().find(".staging"), std::string::npos) << entry.path();
  }
}

TEST(Report, WritesEveryFileWithNonEmptyPlots) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string dir = fresh_dir("full");
  const ReportData data = small_report_data();
  generate_report(data, output_to(dir));
  const std::vector<std::string> plots = {"cost_vs_days_pythia-160m",
                                          "cost_vs_days_pythia-2.8b",
                                          "feasibility",
                                          "gpu_days_vs_reported",
                                          "speedup_over_naive",
                                          "speedup_heatmap",
                                          // The paper's figures its way, beside ours.
                                          "amortised_cost_vs_days_pythia-160m",
                                          "amortised_cost_vs_days_pythia-2.8b",
                                          "memory_saving_paper",
                                          "memory_saving_gain_heatmap",
                                          "relative_speed_paper"};
  for (const std::string& p : plots) {
    expect_real_png(fs::path(dir) / (p + ".png"));
    const std::string svg = read_file(fs::path(dir) / (p + ".svg"));
    EXPECT_NE(svg.find("<svg"), std::string::npos) << p;
    EXPECT_GT(svg.size(), 5000u) << p;
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / "plots" / (p + ".gp"))) << p;
  }
  const std::string html = read_file(fs::path(dir) / "index.html");
  const std::string md = read_file(fs::path(dir) / "report.md");
  // The HTML page stands alone: every PNG is embedded (a PNG's base64 starts "iVBORw0KGgo"),
  // each figure links its SVG; the Markdown twin links the files next to it.
  size_t embedded = 0;
  for (size_t at = html.find("data:image/png;base64,iVBORw0KGgo"); at != std::string::npos;
       at = html.find("data:image/png;base64,iVBORw0KGgo", at + 1)) {
    ++embedded;
  }
  EXPECT_EQ(embedded, plots.size());
  for (const std::string& p : plots) {
    EXPECT_NE(html.find("href=\"" + p + ".svg\""), std::string::npos) << p;
    EXPECT_NE(md.find("](" + p + ".png)"), std::string::npos) << p;
  }
  for (const std::string* doc : {&html, &md}) {
    EXPECT_NE(doc->find("No measurements yet"), std::string::npos);
    EXPECT_NE(doc->find("planner best row (preset all)"), std::string::npos);
    EXPECT_NE(doc->find("$2,300"), std::string::npos);    // 1 x RTX 3090 + base machine
    EXPECT_NE(doc->find("$162,500"), std::string::npos);  // 8 x A100 + base machine
  }
  EXPECT_EQ(html.find("http://"), std::string::npos);  // self-contained: no network
  EXPECT_EQ(html.find("https://"), std::string::npos);
  for (const char* f : {"costs.csv",
                        "tiers.csv",
                        "training_days.csv",
                        "memory_methods.csv",
                        "relative_speed.csv",
                        "training_flops.csv",
                        "memory_saving_paper.csv",
                        "memory_saving_gain.csv",
                        "relative_speed_paper.csv",
                        "training_flops.tex",
                        "memory_saving_paper.tex",
                        "relative_speed_paper.tex",
                        "plots.gp",
                        "gnuplot.log"}) {
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / f)) << f;
  }
}

TEST(Report, MeasurementsGetAPredictedVsMeasuredPlot) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string dir = fresh_dir("measured");
  ReportData data = small_report_data();
  data.measurements = {{"pythia-160m", "a100-80gb-sxm", 8, 1.0, 1.3, "constructed"},
                       {"pythia-2.8b", "a100-80gb-sxm", 8, 10.0, 11.0, "constructed"}};
  generate_report(data, output_to(dir));
  expect_real_png(fs::path(dir) / "predicted_vs_measured.png");
  EXPECT_EQ(read_file(fs::path(dir) / "index.html").find("No measurements yet"), std::string::npos);
}

TEST(Report, MissingGnuplotIsAClearEnvironmentError) {
  const std::string dir = fresh_dir("no_gnuplot");
  ReportOutputOptions o = output_to(dir);
  o.gnuplot.executable = "/nonexistent/gnuplot";
  try {
    generate_report(small_report_data(), o);
    FAIL() << "expected EnvironmentError";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos) << e.what();
  }
}

// A report is written whole or not at all: a plotter that fails leaves the previous report
// byte for byte, with no staging directory left behind; a non-empty directory needs `replace`.
TEST(Report, FailedPlotLeavesThePreviousReportIntact) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string dir = fresh_dir("atomic");
  generate_report(small_report_data(), output_to(dir));
  const std::string before = read_file(fs::path(dir) / "index.html");
  ASSERT_FALSE(before.empty());
  EXPECT_THROW(generate_report(small_report_data(), output_to(dir)), InputError);  // not empty
  const fs::path failing = fs::path(fresh_dir("failing-gnuplot"));
  fs::create_directories(failing);
  const fs::path script = failing / "gnuplot";
  std::ofstream(script) << "#!/bin/sh\n[ \"$1\" = --version ] && echo 'gnuplot 5.4' && exit 0\n"
                           "echo 'plot failed' >&2\nexit 3\n";
  fs::permissions(script, fs::perms::owner_all);
  ReportOutputOptions o = output_to(dir);
  o.replace = true;
  o.gnuplot.executable = script.string();
  EXPECT_THROW(generate_report(small_report_data(), o), EnvironmentError);
  EXPECT_EQ(read_file(fs::path(dir) / "index.html"), before);
  expect_no_staging_in(fs::path(dir).parent_path());
  o.gnuplot.executable = "gnuplot";
  generate_report(small_report_data(), o);  // replaces it once complete
  EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / "index.html"));
}

// The EnvironmentError the small report fails with under these options; "" when it does not.
std::string environment_error(const ReportOutputOptions& o) {
  try {
    generate_report(small_report_data(), o);
  } catch (const EnvironmentError& e) {
    return e.what();
  }
  return "";
}

// A "gnuplot" that exits 0 but draws nothing is a clear environment error (not an internal
// one), and the staging directory is gone.
TEST(Report, GnuplotThatDrawsNothingIsAClearErrorAndLeavesNoStaging) {
  const std::string dir = fresh_dir("draws_nothing");
  ReportOutputOptions o = output_to(dir);
  o.gnuplot.executable = "/bin/true";
  const std::string error = environment_error(o);
  EXPECT_NE(error.find("/bin/true exited 0 but drew no "), std::string::npos) << error;
  EXPECT_EQ(error.find(".staging"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir));
  expect_no_staging_in(fs::path(dir).parent_path());
}

// A "gnuplot" that floods its log (here `yes`) is stopped once the log passes 16 MiB, long before
// the time limit, with a clear error; the log is not left to grow and the staging is gone.
TEST(Report, GnuplotThatFloodsItsLogIsStopped) {
  const std::string dir = fresh_dir("floods_log");
  ReportOutputOptions o = output_to(dir);
  o.gnuplot.executable = "yes";
  o.gnuplot.timeout_s = 600.0;
  const auto start = std::chrono::steady_clock::now();
  const std::string error = environment_error(o);
  EXPECT_NE(error.find("wrote more than 16 MiB of output"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120));
  EXPECT_FALSE(fs::exists(dir));
  expect_no_staging_in(fs::path(dir).parent_path());
}

// Whether process `pid` has ended (gone, or a zombie left for init to reap).
bool process_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// A wrapper script whose child floods the log: the whole process group is stopped, not only the
// script, so nothing keeps writing to the removed log.
TEST(Report, AFloodingGrandchildIsStoppedWithTheScript) {
  const std::string dir = fresh_dir("floods_grandchild");
  const fs::path bin = fs::path(fresh_dir("floods_grandchild-bin"));
  fs::create_directories(bin);
  const fs::path pid_file = bin / "yes.pid";
  const fs::path script = bin / "gnuplot";
  std::ofstream(script) << "#!/bin/sh\nyes &\necho $! > '" << pid_file.string() << "'\nwait\n";
  fs::permissions(script, fs::perms::owner_all);
  ReportOutputOptions o = output_to(dir);
  o.gnuplot.executable = script.string();
  const std::string error = environment_error(o);
  EXPECT_NE(error.find("wrote more than 16 MiB of output"), std::string::npos) << error;
  pid_t yes_pid = 0;
  std::ifstream(pid_file) >> yes_pid;
  ASSERT_GT(yes_pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!process_ended(yes_pid) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(process_ended(yes_pid)) << "the script's child still runs: " << yes_pid;
  EXPECT_FALSE(fs::exists(dir));
}

// SIGTERM while gnuplot runs (here the fake gnuplot sends it to gpudays itself) stops the report
// by an exception: gnuplot is killed, the staging directory removed, the old report kept.
TEST(Report, SigtermRemovesTheStagingDirectory) {
  const std::string dir = fresh_dir("sigterm");
  const fs::path script = fs::path(fresh_dir("sigterm-gnuplot")) / "gnuplot";
  fs::create_directories(script.parent_path());
  std::ofstream(script) << "#!/bin/sh\nkill -TERM $PPID\nexec sleep 30\n";
  fs::permissions(script, fs::perms::owner_all);
  ReportOutputOptions o = output_to(dir);
  o.gnuplot.executable = script.string();
  try {
    generate_report(small_report_data(), o);
    FAIL() << "expected Interrupted";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
  }
  EXPECT_FALSE(fs::exists(dir));
  expect_no_staging_in(fs::path(dir).parent_path());
}

// Tics of a log axis: 1-2-5 steps for a normal range; a bounded list for the widest finite one;
// an error, never an endless loop, for infinite, NaN, zero or negative bounds.
TEST(Plots, LogTicsEndForAnyRange) {
  const auto plain = [](double v) { return fmt::format("{:g}", v); };
  EXPECT_EQ(log_tics(1000.0, 20000.0, plain),
            "('1000' 1000, '2000' 2000, '5000' 5000, '10000' 10000, '20000' 20000)");
  const std::string wide = log_tics(1e-300, 1e300, plain);
  EXPECT_LT(std::count(wide.begin(), wide.end(), ','), 40) << wide;
  EXPECT_GT(std::count(wide.begin(), wide.end(), ','), 10) << wide;
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{
           {1.0, inf}, {0.0, 10.0}, {-1.0, 10.0}, {std::nan(""), 10.0}, {10.0, 1.0}, {0.0, 0.0}}) {
    EXPECT_THROW(log_tics(lo, hi, plain), InputError) << lo << " " << hi;
  }
}

// Free hardware (a $0 GPU in a $0 machine): a log axis cannot show $0, so there is no cost plot
// (the axis loop used to spin forever on it), only the table.
TEST(Report, FreeHardwareHasNoCostPlot) {
  ReportDataOptions options;
  options.models = {&catalog().model("pythia-160m")};
  options.cost.assumptions = load_cost_assumptions(cost_assumptions_path(catalog().config_dir()));
  for (BaseMachinePrice& m : options.cost.assumptions.base_machines) m.usd = 0.0;
  options.cost.price_overrides.purchase_usd["a100-80gb-sxm"] = {0.0, "--price a100=0"};
  options.hardware = {{&catalog().gpu("a100"), 1}, {&catalog().gpu("a100"), 8}};
  const ReportData data = collect_report_data(options);
  const std::string dir = fresh_dir("free");
  EXPECT_FALSE(cost_vs_days_plot(data, 0, dir).has_value());
  EXPECT_FALSE(cost_vs_days_plot(data, 0, dir, CostAxis::kAmortised).has_value());
}

TEST(Report, DetailCountMustBeOneOfTheCounts) {
  ReportDataOptions options;
  options.models = {&catalog().model("pythia-160m")};
  options.cost.assumptions = load_cost_assumptions(cost_assumptions_path(catalog().config_dir()));
  options.hardware = {{&catalog().gpu("a100"), 4}};
  options.detail_gpu_count = 8;
  EXPECT_THROW(collect_report_data(options), InputError);
}

TEST(ReportDoc, HtmlAndMarkdownEscapeText) {
  Document doc;
  doc.title = "a <b> & c";
  doc.add(DocTable{{"x|y"}, {{"1 < 2"}}, "zero_1"});
  const std::string html = render_html(doc);
  EXPECT_NE(html.find("a &lt;b&gt; &amp; c"), std::string::npos);
  EXPECT_NE(html.find("<td>1 &lt; 2</td>"), std::string::npos);
  const std::string md = render_markdown(doc);
  EXPECT_NE(md.find("x\\|y"), std::string::npos);
  EXPECT_NE(md.find("zero\\_1"), std::string::npos);
  // A model name with HTML in it is text in report.md too, not markup a viewer would render.
  doc.add(DocParagraph{"<script>alert(1)</script> &amp;"});
  const std::string escaped = render_markdown(doc);
  EXPECT_NE(escaped.find("\\<script\\>alert(1)\\</script\\> \\&amp;"), std::string::npos)
      << escaped;
  EXPECT_EQ(escaped.find("<script>"), std::string::npos) << escaped;
}

TEST(ReportCli, WritesTheReportAndRejectsBadInput) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string dir = fresh_dir("cli");
  const auto r =
      test::run_gpudays("report --out " + dir + " --models pythia-160m --gpus a100 --counts 1,8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("index.html"), std::string::npos);
  expect_real_png(fs::path(dir) / "feasibility.png");
  // costs.csv has the cost row's columns, as `gpudays cost --format csv` prints them.
  const std::string costs = read_file(fs::path(dir) / "costs.csv");
  const auto cost =
      test::run_gpudays("cost --model pythia-160m --gpus a100 --counts 1,8 --format csv");
  EXPECT_EQ(costs.substr(0, costs.find('\n')), cost.out.substr(0, cost.out.find('\n')));
  EXPECT_EQ(std::count(costs.begin(), costs.end(), '\n'), 3) << costs;
  // "dir/" is the same directory: replaced beside itself, not staged inside it.
  const auto again = test::run_gpudays("report --out " + dir +
                                       "/ --force --models pythia-160m --gpus a100 --counts 1");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(fs::exists(fs::path(dir) / "index.html"));
  const auto bad = test::run_gpudays("report --out " + dir + " --models nope");
  EXPECT_EQ(bad.exit_code, 2);
  const auto no_gnuplot =
      test::run_gpudays("report --out " + dir + " --gnuplot /nonexistent/gnuplot");
  EXPECT_EQ(no_gnuplot.exit_code, 1);  // a missing tool, not a usage error
  EXPECT_NE(no_gnuplot.err.find("gnuplot"), std::string::npos);
}

// Huge costs (the report hung forever drawing their axis) are refused before anything is written.
TEST(ReportCli, AbsurdCostsAreRefusedBeforeAnyPlot) {
  const std::string dir = fresh_dir("absurd_costs");
  for (const char* flags : {"--amortisation-years 1e-307", "--price a100=1e307"}) {
    const auto r = test::run_gpudays("report --models pythia-160m --gpus a100 --counts 1,8 " +
                                     std::string(flags) + " --gnuplot /bin/true --out " + dir);
    EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir)) << flags;
  }
}

// `--out X --force` replaces X as a whole: an X that is or holds an input of the command (the
// catalog, --db, --model-file, --prices, --cost-config) is refused, and the input stays.
TEST(ReportCli, OutThatHoldsAnInputIsRefusedAndTheInputKept) {
  const fs::path victim = fresh_dir("victim_catalog");
  fs::copy(catalog().config_dir(), victim, fs::copy_options::recursive);
  const std::string args =
      " --models pythia-160m --gpus a100 --counts 1 --force --gnuplot /bin/true --out ";
  const auto r =
      test::run_gpudays("--config-dir " + victim.string() + " report" + args + victim.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("would replace the catalog (--config-dir)"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_regular_file(victim / "cost" / "cost.toml"));
  const fs::path holder = fresh_dir("holder");
  fs::create_directories(holder / "sub");
  const std::string prices = (holder / "sub" / "prices.toml").string();
  std::ofstream(prices) << "[purchase_usd]\na100 = 17000\n";
  const std::string cost_config = (holder / "cost.toml").string();
  fs::copy_file(victim / "cost" / "cost.toml", cost_config);
  const std::string model_file = (holder / "m.toml").string();
  fs::copy_file(victim / "models" / "pythia-160m.toml", model_file);
  const std::string db = (holder / "results.db").string();
  std::ofstream(db) << "";
  for (const std::string& input : {"--prices " + prices,
                                   "--cost-config " + cost_config,
                                   "--model-file " + model_file,
                                   "--db " + db}) {
    const auto held = test::run_gpudays("report " + input + args + holder.string());
    EXPECT_EQ(held.exit_code, 2) << input << ": " << held.err;
    EXPECT_NE(held.err.find("would replace " + input.substr(0, input.find(' '))), std::string::npos)
        << held.err;
  }
  EXPECT_EQ(test::read_file(prices), "[purchase_usd]\na100 = 17000\n");
  EXPECT_TRUE(fs::is_regular_file(model_file));
}

// gnuplot runs in the staging directory, yet a relative --gnuplot path is found; one that exits 0
// without drawing is one line, exit 1 (a tool that failed), not an internal error, and leaves
// neither --out nor a staging directory.
TEST(ReportCli, RelativeGnuplotThatDrawsNothingIsOneLine) {
  const fs::path script = fs::path(fresh_dir("relative-gnuplot")) / "plotter";
  fs::create_directories(script.parent_path());
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  fs::permissions(script, fs::perms::owner_all);
  const std::string out = fresh_dir("relative_out");
  const auto r =
      test::run_gpudays("report --models pythia-160m --gpus a100 --counts 1 --gnuplot " +
                        fs::relative(script, fs::current_path()).string() + " --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("plotter exited 0 but drew no "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  expect_no_staging_in(fs::path(out).parent_path());
}

// SIGTERM while gnuplot runs, from the command line: exit 128 + 15 and one line saying nothing was
// written, in every build (one without LibTorch has no `train` command for the handler to ask
// about: it aborted there once).
TEST(ReportCli, SigtermSaysNothingWasWrittenAndExits143) {
  const fs::path script = fs::path(fresh_dir("cli-sigterm-gnuplot")) / "gnuplot";
  fs::create_directories(script.parent_path());
  std::ofstream(script) << "#!/bin/sh\nkill -TERM $PPID\nexec sleep 30\n";
  fs::permissions(script, fs::perms::owner_all);
  const std::string out = fresh_dir("cli-sigterm-out");
  const auto r = test::run_gpudays("report --models pythia-160m --gpus a100 --counts 1 --gnuplot " +
                                   script.string() + " --out " + out);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("interrupted by signal 15; nothing was written"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Paths given empty are said to be empty (not "cannot start gnuplot"); the working directory is
// named as such (not "cannot move aside .: Device or resource busy").
TEST(ReportCli, EmptyPathsAndTheWorkingDirectoryAreClearErrors) {
  const std::string report = "report --models pythia-160m --gpus a100 --counts 1 ";
  const std::pair<std::string, const char*> cases[] = {
      {report + "--out ''", "--out: the path is empty"},
      {report + "--out " + fresh_dir("empty_gnuplot") + " --gnuplot ''",
       "--gnuplot: the path is empty"},
      {report + "--gnuplot /bin/true --force --out .", "is (or contains) the working directory"},
      {report + "--gnuplot /bin/true --force --out ..", "is (or contains) the working directory"},
  };
  for (const auto& [args, needle] : cases) {
    const auto r = test::run_gpudays(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(fresh_dir("empty_gnuplot")));
}

TEST(ReportCli, MeasurementsFromTheResultsDatabaseArePlotted) {
  SKIP_WITHOUT_GNUPLOT();
  const std::string db_path = test::write_temp_file("report_measured.db", "");
  fs::remove(db_path);
  {
    ResultsDb db = ResultsDb::open({db_path, /*read_only=*/false, &test::catalog()});
    TrialRecord t;
    t.model = "pythia-160m";
    t.gpu = "a100-80gb-sxm";
    t.config.micro_batch_size = 8;
    t.config.grad_acc_steps = 128;  // pythia-160m's global batch of 1024
    test::set_measured_step(t, 12.0);
    t.predicted_step_time_s = 10.0;
    t.created_at = "2026-11-30T07:00:00Z";
    db.insert(t);
  }
  const std::string dir = fresh_dir("measured_cli");
  const auto r = test::run_gpudays("report --out " + dir + " --models pythia-160m --db " + db_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_real_png((fs::path(dir) / "predicted_vs_measured.png").string());
  const std::string md = read_file(fs::path(dir) / "report.md");
  EXPECT_EQ(md.find("No measurements yet"), std::string::npos);
  const std::string html = read_file(fs::path(dir) / "index.html");
  EXPECT_NE(html.find("report_measured.db row"), std::string::npos);  // the row it came from
  EXPECT_NE(html.find("<td>1.20</td>"), std::string::npos);           // measured / predicted
}

}  // namespace
}  // namespace gpudays
