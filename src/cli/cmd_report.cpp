// `gpudays report --out DIR`: the cost and feasibility report (HTML + Markdown + PNG/SVG plots)
// for a set of models over a set of GPU types and counts, from the planner and the catalog.
#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "common/build_info.h"
#include "common/error.h"
#include "report/report.h"
#include "results/results_db.h"

namespace gpudays {
namespace {

struct ReportRequest {
  std::string out_dir;
  std::string db = "gpudays.db";
  bool db_given = false;
  bool force = false;               // replace a non-empty --out
  bool whole_days = false;          // the days tables in whole days, as the paper prints them
  std::vector<std::string> models;  // empty: every catalog model (unless model_files)
  std::vector<std::string> model_files;
  int64_t detail_gpu_count = 0;  // 0: the largest of --counts
  std::string gnuplot = "gnuplot";
  CostRequest cost;
};

// The results database: --db, or ./gpudays.db when it exists; empty: none.
std::string results_path(const ReportRequest& r) {
  return r.db_given || std::filesystem::exists(r.db) ? r.db : std::string();
}

std::string today() {
  return fmt::format(
      "{:%Y-%m-%d}",
      fmt::localtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

namespace fs = std::filesystem;

// The path with symbolic links resolved as far as it exists, without a trailing separator.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) p = fs::absolute(path).lexically_normal();
  return p.has_filename() ? p : p.parent_path();
}

// True when `dir` is `path` or one of its ancestors.
bool is_or_contains(const fs::path& dir, const fs::path& path) {
  auto p = path.begin();
  for (const fs::path& part : dir) {
    if (p == path.end() || *p != part) return false;
    ++p;
  }
  return true;
}

// Before any work: paths that are given must not be empty ('' is not "absent").
void check_paths_given(const ReportRequest& r) {
  if (r.out_dir.empty()) throw InputError("--out: the path is empty; name the report directory");
  if (r.gnuplot.empty()) throw InputError("--gnuplot: the path is empty; name gnuplot or omit it");
}

// The command's inputs, each with its flag: what a replaced --out must not hold.
std::vector<std::pair<std::string, std::string>> report_inputs(const ReportRequest& r,
                                                               const Catalog& catalog,
                                                               const std::string& gnuplot) {
  std::vector<std::pair<std::string, std::string>> inputs = {
      {"the catalog (--config-dir)", catalog.config_dir()}, {"--gnuplot", gnuplot}};
  if (!results_path(r).empty()) inputs.emplace_back("--db", results_path(r));
  for (const std::string& f : r.model_files) inputs.emplace_back("--model-file", f);
  const std::pair<const char*, const std::string*> optional_files[] = {
      {"--prices", &r.cost.price_file},
      {"--cost-config", &r.cost.cost_config},
      {"--cluster", &r.cost.cluster_file}};
  for (const auto& [flag, path] : optional_files) {
    if (!path->empty()) inputs.emplace_back(flag, *path);
  }
  return inputs;
}

// --out is replaced as a whole: refuse one that is the working directory or an input of the
// command, or holds one (--force would delete it).
void check_out_dir(const ReportRequest& r, const Catalog& catalog, const std::string& gnuplot) {
  const fs::path out = resolved(r.out_dir);
  if (is_or_contains(out, resolved(fs::current_path().string()))) {
    throw InputError(fmt::format(
        "--out {}: is (or contains) the working directory, which a report would replace; choose "
        "a new directory",
        r.out_dir));
  }
  for (const auto& [what, path] : report_inputs(r, catalog, gnuplot)) {
    if (is_or_contains(out, resolved(path))) {
      throw InputError(fmt::format(
          "--out {}: would replace {} {}, an input of this report; choose another directory",
          r.out_dir,
          what,
          path));
    }
  }
}

void run_report(const GlobalOptions& global, const ReportRequest& r) {
  check_paths_given(r);
  ReportOutputOptions output;
  output.out_dir = r.out_dir;
  output.replace = r.force;
  output.days_rounding = r.whole_days ? DaysRounding::kWholeDays : DaysRounding::kTenths;
  output.gnuplot.executable = r.gnuplot;
  const std::string gnuplot = require_gnuplot(output.gnuplot);  // before any work
  const Catalog catalog = Catalog::load({global.config_dir});
  check_out_dir(r, catalog, gnuplot);
  ReportDataOptions options;
  options.plan = cost_plan_options(r.cost, catalog);
  std::deque<ModelSpec> from_files;
  options.models = catalog.resolve_models(r.models, r.model_files, from_files);
  options.cost = build_cost_options(r.cost, catalog);
  options.cost.basis = CostBasis::kPurchase;  // the plots' y axis
  std::deque<GpuSpec> limited;                // --power-limit-fraction's GPUs
  options.hardware = hardware_options(
      power_limited(resolve_gpus(catalog, r.cost.gpus), r.cost.power_limit_fraction, limited),
      r.cost.counts,
      options.cost.assumptions);
  options.detail_gpu_count = r.detail_gpu_count > 0
                                 ? r.detail_gpu_count
                                 : *std::max_element(r.cost.counts.begin(), r.cost.counts.end());
  machine_layout(options.detail_gpu_count, options.cost.assumptions.base_machines);
  options.results_path = results_path(r);
  options.catalog = &catalog;
  ReportData data = collect_report_data(options);
  if (!options.results_path.empty()) {
    add_measurements(
        data,
        ResultsDb::open({.path = options.results_path, .read_only = true, .catalog = &catalog})
            .query({}),
        r.db);
  }
  data.paper =
      compare_with_paper(catalog, *make_time_source({TimeSourceKind::kPlan, options.plan, ""}));

  output.generated_by = fmt::format("gpudays {} ({})", kVersion, git_commit());
  output.generated_at = today();
  output.config_dir = catalog.config_dir();
  const std::vector<std::string> files = generate_report(data, output);
  size_t images = 0;
  for (const std::string& f : files) images += f.ends_with(".png") ? 1 : 0;
  std::cout << fmt::format(
      "wrote {0}/index.html and {0}/report.md with {1} plots (PNG + SVG) for "
      "{2} models x {3} GPU types\n",
      r.out_dir,
      images,
      data.models.size(),
      data.gpus.size());
}

}  // namespace

void add_report_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<ReportRequest>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write a report (index.html, report.md, PNG and SVG plots drawn by gnuplot, CSV data) on "
      "what pre-training each model costs and takes on each GPU type and count.");
  cmd->add_option("--out",
                  r->out_dir,
                  "Output directory (created if missing; a non-empty one needs --force)")
      ->required();
  cmd->add_flag("--force",
                r->force,
                "Replace a non-empty --out directory (only once the new report is complete)");
  cmd->add_option(
         "--db",
         r->db,
         "Benchmark results: measured cells of the tables and predicted vs measured (default: "
         "./gpudays.db if it exists)")
      ->each([r](const std::string&) { r->db_given = true; });
  cmd->add_option("--models",
                  r->models,
                  "Models, comma-separated (default: every catalog model; see `gpudays models`)")
      ->delimiter(',');
  cmd->add_option("--model-file",
                  r->model_files,
                  "A model TOML file (repeatable; with --models, both are reported)")
      ->check(CLI::ExistingFile);
  add_cost_request_options(*cmd, r->cost);
  cmd->add_option("--detail-gpus",
                  r->detail_gpu_count,
                  "GPU count of the speed-up and GPU-days plots, one of --counts (default: the "
                  "largest of --counts)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_flag("--whole-days",
                r->whole_days,
                "Print the training-days tables (and their LaTeX) in whole days, as the paper "
                "prints them (halves away from zero); the CSV files keep every digit");
  cmd->add_option("--gnuplot", r->gnuplot, "gnuplot executable (name on PATH or path)")
      ->capture_default_str();
  cmd->footer(
      "Sections: a summary (per model, the fastest and cheapest option under 100 days and "
      "$100K), the paper's tables (training days with optimal and naive settings, the optimal "
      "settings, training FLOPs, memory-saving methods, speed-up heat-maps, relative training "
      "speed, amortised and cloud cost; where the paper defines a figure differently, its "
      "definition beside ours), feasibility, GPU-days vs the reported run, predicted vs "
      "measured, per-model purchase and amortised cost vs days. Every table also as LaTeX "
      "(NAME.tex). Every cell says whether it is predicted (planner) or measured (--db), with "
      "its source.\nExamples:\n  gpudays report "
      "--out out/report\n"
      "  gpudays report --out out/pythia --models pythia-410m,pythia-1b --gpus a100,h100 "
      "--counts 4,8,16");
  cmd->callback([&global, r] { run_report(global, *r); });
}

}  // namespace gpudays
