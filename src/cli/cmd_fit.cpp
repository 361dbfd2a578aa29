// `gpudays fit`: the inverse questions (advise/fit.h). With --gpu and --gpus: which catalog models
// train with their original recipes within --days/--budget, and the largest compute-optimal model
// of a family that does. With --model: the cheapest hardware (GPU type x count) that trains it
// within the limits.
#include <deque>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "advise/compute_optimal.h"
#include "advise/fit.h"
#include "advise/model_file.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "common/error.h"
#include "common/output_files.h"
#include "cost/cost_assumptions.h"
#include "cost/cost_format.h"
#include "rows/fit_rows.h"

namespace gpudays {
namespace {

struct FitRequest {
  std::string gpu;
  int64_t gpus = 0;
  std::string model;
  std::string model_file;
  std::string family = "gpt_neox";
  std::string write_model;  // the largest compute-optimal model's file, when given
  std::string basis = "purchase";
  std::string format = "table";
  double days = 0.0;
  double budget_usd = 0.0;
  double tokens_per_param = kChinchillaTokensPerParam;
  std::vector<std::string> candidates;  // hardware mode: GPU types (empty: every priced GPU)
  std::vector<int64_t> counts = {1, 2, 4, 8, 16, 32, 64};
  double power_limit_fraction = -1.0;  // --power-limit-fraction; < 0: none (the TDP)
  CLI::Option* days_option = nullptr;
  CLI::Option* budget_option = nullptr;
  CLI::Option* gpus_option = nullptr;
  // The compute-optimal answer's options (--gpu/--gpus mode), refused with --model.
  CLI::Option* write_model_option = nullptr;
  CLI::Option* family_option = nullptr;
  CLI::Option* tokens_per_param_option = nullptr;
};

// --model answers which hardware, not which model: the compute-optimal options would do nothing.
void check_hardware_mode_options(const FitRequest& r) {
  for (const CLI::Option* option :
       {r.write_model_option, r.family_option, r.tokens_per_param_option}) {
    if (option->count() > 0) {
      throw InputError(
          fmt::format("{} is for --gpu G --gpus N (the largest compute-optimal "
                      "model); with --model it would do nothing",
                      option->get_name()));
    }
  }
}

std::string limits_text(const CostOptions& cost) {
  std::string text;
  if (cost.max_days) text += fmt::format(" within {:g} days", *cost.max_days);
  if (cost.budget_usd)
    text += fmt::format("{} for at most {} ({})",
                        text.empty() ? "" : " and",
                        format_usd(*cost.budget_usd),
                        to_string(cost.basis));
  return text;
}

// `limited` keeps the GPUs under --power-limit-fraction for as long as the options are used.
std::vector<HardwareOption> candidate_hardware(const Catalog& catalog,
                                               const FitRequest& r,
                                               const CostOptions& cost,
                                               std::deque<GpuSpec>& limited) {
  std::vector<const GpuSpec*> gpus;
  if (!r.gpu.empty()) {
    gpus.push_back(&catalog.gpu(r.gpu));
  } else if (!r.candidates.empty()) {
    gpus = resolve_gpus(catalog, r.candidates);
  } else {
    for (const GpuSpec& g : catalog.gpus())
      if (g.purchase_usd > 0.0) gpus.push_back(&g);
  }
  const std::vector<int64_t> counts =
      r.gpus_option->count() > 0 ? std::vector<int64_t>{r.gpus} : r.counts;
  return hardware_options(
      power_limited(gpus, r.power_limit_fraction, limited), counts, cost.assumptions);
}

// --model: the hardware options that train the model within the limits, cheapest first.
FitReport answer_hardware(const Catalog& catalog,
                          const FitRequest& r,
                          const FitOptions& options,
                          std::deque<GpuSpec>& limited) {
  check_hardware_mode_options(r);
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  FitReport report;
  report.hardware_mode = true;
  report.rows =
      cheapest_hardware(model, candidate_hardware(catalog, r, options.cost, limited), options);
  report.question = fmt::format("Hardware that trains {}{}, cheapest ({}) first:",
                                model.name,
                                limits_text(options.cost),
                                to_string(options.cost.basis));
  return report;
}

void write_model_file(const std::string& path,
                      const ModelSpec& family,
                      const FitRow& largest,
                      const FitOptions& options) {
  const ModelSpec chosen = compute_optimal_model(family, largest.d_model, options.scaling).model;
  write_file_atomically(
      path,
      transformer_model_toml(
          chosen,
          fmt::format("Written by `gpudays fit`: the largest compute-optimal {} model ({:g} tokens "
                      "per parameter) on {} x {}{}.",
                      to_string(family.family),
                      options.scaling.tokens_per_param,
                      largest.cost.layout.world_size(),
                      largest.cost.gpu,
                      limits_text(options.cost))));
}

// --gpu and --gpus: the catalog models and the largest compute-optimal model within the limits.
FitReport answer_what_fits(const Catalog& catalog,
                           const FitRequest& r,
                           const FitOptions& options,
                           std::deque<GpuSpec>& limited) {
  if (r.gpu.empty() || r.gpus_option->count() == 0)
    throw InputError(
        "fit needs --gpu and --gpus (what fits this hardware) or --model (what "
        "hardware fits this model)");
  const HardwareOption hardware = candidate_hardware(catalog, r, options.cost, limited).front();
  const ModelSpec& family = compute_optimal_template(catalog, r.family);
  // Checks the family and the limits before the catalog's rows are planned.
  compute_optimal_model(family, 2 * options.scaling.d_model_step, options.scaling);
  if (!options.cost.max_days && !options.cost.budget_usd)
    throw InputError("fit needs a limit: --days D, --budget USD or both");
  FitReport report;
  report.tokens_per_param = options.scaling.tokens_per_param;
  report.rows = fit_catalog_models(catalog, hardware, options);
  report.largest = largest_compute_optimal(family, hardware, options);
  if (report.largest && !r.write_model.empty()) {
    write_model_file(r.write_model, family, *report.largest, options);
    report.written_model = r.write_model;
  } else if (!r.write_model.empty()) {
    std::cerr << fmt::format(
        "gpudays: note: no compute-optimal model meets the limits; {} was not written\n",
        r.write_model);
  }
  report.family = fmt::format("{} (recipe of {})", to_string(family.family), family.name);
  report.question =
      fmt::format("Catalog models with their original recipes on {} x {}{} (cost_usd: {}):",
                  hardware.gpu_count,
                  hardware.gpu->name,
                  limits_text(options.cost),
                  to_string(options.cost.basis));
  return report;
}

// The files a fit reads: the catalog's models, GPUs and measurements, its calibration and the
// cost assumptions. --write-model may add a model to the catalog, never replace one of these.
std::vector<std::string> fit_inputs(const Catalog& catalog) {
  std::vector<std::string> inputs = {catalog.config_dir() + "/calibration.toml",
                                     cost_assumptions_path(catalog.config_dir())};
  for (const char* sub : {"models", "gpus", "measurements"}) {
    const std::string dir = catalog.config_dir() + "/" + sub;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    for (std::string& file : catalog_toml_files(dir)) inputs.push_back(std::move(file));
  }
  return inputs;
}

void run_fit(const GlobalOptions& global, const FitRequest& r) {
  if (r.write_model_option->count() > 0 && r.write_model.empty())
    throw InputError("--write-model: the path is empty");
  const Catalog catalog = Catalog::load({global.config_dir});
  if (!r.write_model.empty()) {
    check_output_file(r.write_model, "--write-model");
    refuse_output_over_inputs(r.write_model, fit_inputs(catalog), "--write-model");
  }
  FitOptions options;
  CostRequest cost_request;
  cost_request.power_limit_fraction = r.power_limit_fraction;
  options.cost = build_cost_options(cost_request, catalog);
  options.cost.basis = parse_cost_basis(r.basis);
  if (r.days_option->count() > 0) options.cost.max_days = r.days;
  if (r.budget_option->count() > 0) options.cost.budget_usd = r.budget_usd;
  options.plan = cost_plan_options(CostRequest{}, catalog);
  options.scaling.tokens_per_param = r.tokens_per_param;
  const bool hardware_mode = !r.model.empty() || !r.model_file.empty();
  std::deque<GpuSpec> limited;  // --power-limit-fraction's GPUs
  const FitReport report = hardware_mode ? answer_hardware(catalog, r, options, limited)
                                         : answer_what_fits(catalog, r, options, limited);
  print_fit(std::cout, report, parse_row_format(r.format));
}

}  // namespace

void add_fit_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<FitRequest>();
  CLI::App* cmd = app.add_subcommand(
      "fit",
      "The inverse questions. --gpu G --gpus N: which catalog models can be pre-trained with "
      "their original recipes within --days/--budget, and the largest compute-optimal model "
      "(Chinchilla, ~20 tokens per parameter) of --family that fits in memory and finishes "
      "within them. --model M: the cheapest hardware (GPU type x count) that trains M within "
      "them.");
  add_gpu_option(*cmd, r->gpu, "GPU type (with --gpus), or the only type to consider (--model)");
  r->gpus_option = cmd->add_option("--gpus",
                                   r->gpus,
                                   "Number of GPUs (1, 2, 4, 8 or a multiple of 8 nodes' worth); " +
                                       gpu_count_limit_help())
                       ->check(CLI::Range(int64_t{1}, kMaxCountGpus));
  add_model_options(*cmd, r->model, r->model_file);
  r->days_option = cmd->add_option("--days", r->days, "Finish within D days")
                       ->check(number_check(0.0, 1e9, /*low_open=*/true));
  r->budget_option = cmd->add_option("--budget", r->budget_usd, "Cost at most USD on --cost-basis")
                         ->check(number_check(0.0, 1e15, /*low_open=*/true));
  cmd->add_option("--cost-basis", r->basis, "What --budget pays: purchase, amortised or cloud")
      ->check(CLI::IsMember({"purchase", "amortised", "cloud"}))
      ->capture_default_str();
  r->family_option =
      cmd->add_option("--family",
                      r->family,
                      "Compute-optimal family: gpt_neox (Pythia-1B's recipe), roberta, llama "
                      "(TinyLlama-1.1B's), or a catalog transformer language model whose recipe to "
                      "scale")
          ->capture_default_str();
  r->write_model_option = cmd->add_option(
      "--write-model",
      r->write_model,
      "Write the largest compute-optimal model as a model file (for --model-file); with --gpu "
      "and --gpus");
  r->tokens_per_param_option =
      cmd->add_option("--tokens-per-param", r->tokens_per_param, "Training tokens per parameter")
          ->check(number_check(0.0, 1e6, /*low_open=*/true))
          ->capture_default_str();
  cmd->add_option(
         "--candidates", r->candidates, "GPU types for --model (default: every priced GPU)")
      ->delimiter(',');
  cmd->add_option("--counts", r->counts, "GPU counts for --model; " + gpu_count_limit_help())
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, kMaxCountGpus))
      ->capture_default_str()
      ->excludes(r->gpus_option);  // one count, or several to search
  add_power_limit_fraction_option(*cmd, r->power_limit_fraction);
  add_format_option(*cmd, r->format, row_format_names());
  cmd->footer(
      "Times are the planner's best configuration; prices as in `gpudays cost` (docs/paper.md).\n"
      "Examples:\n"
      "  gpudays fit --gpu a100 --gpus 4 --days 30\n"
      "  gpudays fit --gpu rtx-3090 --gpus 8 --budget 2000 --cost-basis amortised\n"
      "  gpudays fit --model pythia-1b --days 30");
  cmd->callback([&global, r] { run_fit(global, *r); });
}

}  // namespace gpudays
