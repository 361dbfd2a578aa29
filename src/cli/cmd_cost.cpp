// `gpudays cost`: what each hardware option costs to buy, to rent and in energy for pre-training
// one model, which options are on the days-vs-cost frontier, and the --max-days / --budget answers.
#include <deque>
#include <iostream>

#include <fmt/format.h>

#include "catalog/catalog.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "common/error.h"
#include "common/json_text.h"
#include "rows/cost_summary.h"

namespace gpudays {
namespace {

struct CostCommandRequest {
  std::string model;
  std::string model_file;
  std::string source = "plan";
  std::string db = "gpudays.db";
  std::string methods = "all";
  std::string basis = "purchase";
  std::string format = "table";
  double max_days = 0.0;
  double budget_usd = 0.0;
  CLI::Option* max_days_option = nullptr;
  CLI::Option* budget_option = nullptr;
  CostRequest cost;
  CLI::Option* db_option = nullptr;
};

void run_cost(const GlobalOptions& global, const CostCommandRequest& r) {
  refuse_db_without_bench(r.db_option, r.source);
  const Catalog catalog = Catalog::load({global.config_dir});
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  CostOptions cost = build_cost_options(r.cost, catalog);
  cost.basis = parse_cost_basis(r.basis);
  if (r.max_days_option->count() > 0) cost.max_days = r.max_days;
  if (r.budget_option->count() > 0) cost.budget_usd = r.budget_usd;
  TimeSourceOptions source_options;
  source_options.kind = parse_source_flag(r.source);
  if (r.cost.power_limit_fraction >= 0.0 && source_options.kind != TimeSourceKind::kPlan) {
    throw InputError(
        "--power-limit-fraction applies to planned times (--source plan); measured trials ran at "
        "their GPUs' own limits");
  }
  std::deque<GpuSpec> limited;  // --power-limit-fraction's GPUs
  const std::vector<HardwareOption> options = hardware_options(
      power_limited(resolve_gpus(catalog, r.cost.gpus), r.cost.power_limit_fraction, limited),
      r.cost.counts,
      cost.assumptions);
  source_options.plan = cost_plan_options(r.cost, catalog);
  source_options.plan.preset = parse_preset(r.methods);
  source_options.results_path = r.db;
  source_options.catalog = &catalog;
  const std::unique_ptr<TrainingTimeSource> source = make_time_source(source_options);

  const CostAnalysis analysis = analyse_costs(model, options, *source, cost);
  const CostReportContext context{model.name, source->name(), &cost};
  const RowFormat format = parse_row_format(r.format);
  if (format == RowFormat::kJson) {
    std::cout << json_text(cost_analysis_json(analysis, context), 2) << "\n";
  } else if (format == RowFormat::kTable) {
    print_cost_table(std::cout, analysis, context);
  } else {
    print_cost_rows(std::cout, analysis, format);
  }
}

}  // namespace

void add_cost_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<CostCommandRequest>();
  CLI::App* cmd = app.add_subcommand(
      "cost",
      "What each hardware option (GPU type x count) costs for pre-training a model: training "
      "days, purchase (GPUs + base machine), the run's 5-year amortised share, cloud rental, "
      "energy and CO2, and the days-vs-cost Pareto frontier.");
  add_model_options(*cmd, r->model, r->model_file);
  add_cost_request_options(*cmd, r->cost);
  cmd->add_option("--source",
                  r->source,
                  "Where training days come from: plan (the analytic planner) or bench "
                  "(the fastest measured trial in --db)")
      ->check(CLI::IsMember({"plan", "bench"}))
      ->capture_default_str();
  r->db_option =
      cmd->add_option("--db", r->db, "Results database for --source bench")->capture_default_str();
  cmd->add_option("--methods", r->methods, "Planner method preset: naive, free-lunch or all")
      ->check(CLI::IsMember({"naive", "free-lunch", "all"}))
      ->capture_default_str();
  cmd->add_option("--cost-basis",
                  r->basis,
                  "Cost on the frontier and in --max-days/--budget: purchase, amortised or cloud")
      ->check(CLI::IsMember({"purchase", "amortised", "cloud"}))
      ->capture_default_str();
  r->max_days_option =
      cmd->add_option(
             "--max-days", r->max_days, "Show the cheapest option that finishes within D days")
          ->check(number_check(0.0, 1e9, /*low_open=*/true));
  r->budget_option =
      cmd->add_option("--budget", r->budget_usd, "Show the fastest option that costs at most USD")
          ->check(number_check(0.0, 1e15, /*low_open=*/true));
  add_format_option(*cmd, r->format, row_format_names());
  cmd->footer(
      "Formulas (docs/cost.md): purchase = GPUs x GPU price + one base machine per node ($1,000 / "
      "$1,500 / $7,500 / $10,500 for 1 / 2 / 4 / 8 GPUs); amortised = purchase x days / (5 x "
      "365); cloud = GPU-hours x $/GPU-hour (n/a without a price); energy = TDP x GPUs x hours x "
      "0.8 (at most the power limit). Options that cannot run are listed with the "
      "reason.\nExamples:\n"
      "  gpudays cost --model pythia-1b\n"
      "  gpudays cost --model pythia-1b --gpus a100,h100 --counts 4,8,16 --max-days 30\n"
      "  gpudays cost --model pythia-2.8b --price a100=15000 --budget 100000 --format json\n"
      "  gpudays cost --model pythia-1b --gpus a100,h100 --power-limit-fraction 0.7   (GPUs "
      "capped at 70% of their TDP)");
  cmd->callback([&global, r] { run_cost(global, *r); });
}

}  // namespace gpudays
