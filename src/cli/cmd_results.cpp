// `gpudays results` (the stored trials, filtered), `gpudays best` (the optimal measured row, like
// the reference's) and `gpudays export` (the chosen configuration as HuggingFace
// TrainingArguments, DeepSpeed configuration or gpudays run file).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "accuracy/planner_options.h"
#include "catalog/catalog.h"
#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/results_request.h"
#include "common/error.h"
#include "common/json_text.h"
#include "common/output_files.h"
#include "exports/export.h"
#include "exports/export_choice.h"
#include "plan/planner.h"
#include "results/results_db.h"
#include "rows/plan_rows.h"
#include "rows/row_format.h"
#include "rows/trial_rows.h"
#include "search_space/search_space.h"
#include "sweep/host_probe.h"

namespace gpudays {

// The results key of --gpu: the host CPU's name, or a catalog GPU's; empty for any.
std::string gpu_key(const Catalog& catalog, const std::string& gpu) {
  if (gpu.empty()) return "";
  return is_host_cpu_name(gpu) ? kHostCpuName : catalog.gpu(gpu).name;
}

namespace {

// The model a request names: --model-file's, or a catalog model by name or HuggingFace id; a name
// the catalog lacks stays as typed (the results may hold a model benchmarked from a file).
std::optional<ModelSpec> named_model(const Catalog& catalog, const ResultsRequest& r) {
  if (!r.model_file.empty()) return catalog.resolve_model(r.model, r.model_file);
  if (const ModelSpec* m = catalog.find_model(r.model)) return *m;
  return std::nullopt;
}

}  // namespace

std::string model_key(const Catalog& catalog, const ResultsRequest& r) {
  const std::optional<ModelSpec> m = named_model(catalog, r);
  return m ? m->name : r.model;
}

// A model the request resolves (the catalog's, or --model-file's) selects its trials by digest:
// a model of the same name but another architecture or recipe is another model. A name alone
// that the catalog lacks selects by the name shown.
std::vector<TrialRecord> stored_trials(const Catalog& catalog, const ResultsRequest& r) {
  ResultsDb db = ResultsDb::open({.path = r.db, .read_only = true, .catalog = &catalog});
  TrialFilter filter;
  if (const std::optional<ModelSpec> m = named_model(catalog, r)) {
    filter.model_digest = model_digest(*m);
  } else {
    filter.model = r.model;
  }
  filter.gpu = gpu_key(catalog, r.gpu);
  filter.num_nodes = r.nodes;
  filter.gpus_per_node = r.gpus_per_node;
  if (!r.status.empty()) filter.status = parse_trial_status(r.status);
  filter.rule = r.rule == "any" ? std::nullopt : std::optional(parse_measurement_rule(r.rule));
  return db.query(filter);
}

namespace {

// A name the catalog lacks may be shown by trials of several models from files: best names one.
void require_one_model(const std::vector<TrialRecord>& trials, const ResultsRequest& r) {
  std::set<std::string> digests;
  for (const TrialRecord& t : trials) digests.insert(t.model_digest);
  if (digests.size() <= 1) return;
  throw InputError(
      fmt::format("the {} trials named '{}' in {} are of {} different models (from model "
                  "files); name one with --model-file",
                  trials.size(),
                  r.model,
                  r.db,
                  digests.size()));
}

// A model name the catalog lacks selects the trials stored under it (a model benchmarked from a
// file); when none is, the name is unknown, as every other command says, not an empty list.
void require_known_model(const Catalog& catalog, const ResultsRequest& r) {
  if (r.model.empty() || !r.model_file.empty() || catalog.find_model(r.model) != nullptr) return;
  ResultsRequest any = r;  // the name alone, whatever the other filters
  any.gpu.clear();
  any.nodes = 0;
  any.gpus_per_node = 0;
  any.status.clear();
  any.rule = "any";
  if (!stored_trials(catalog, any).empty()) return;
  try {
    catalog.model(r.model);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}; no trial in {} is of a model so named", e.what(), r.db));
  }
}

std::optional<TrialRecord> best_trial(const Catalog& catalog, const ResultsRequest& r) {
  const std::vector<TrialRecord> trials = stored_trials(catalog, r);
  require_one_model(trials, r);
  const TrialRecord* best = fastest_ok(trials);
  return best == nullptr ? std::nullopt : std::optional<TrialRecord>(*best);
}

// Whether a stored trial has measured the row's configuration (a killed one has not: a sweep
// measures it again).
bool measured(const std::vector<TrialRecord>& trials, const PlanRow& row) {
  return std::any_of(trials.begin(), trials.end(), [&](const TrialRecord& t) {
    return t.measured.status != TrialStatus::kKilled && t.cluster == row.cluster &&
           t.config == row.config;
  });
}

// The host CPU as its probe measured it (results --incomplete --gpu cpu).
GpuSpec probed_host(const GlobalOptions& global, const ResultsRequest& r) {
  try {
    return host_cpu_device(r.db, {/*memory_limit_bytes=*/0, /*ranks=*/r.gpus_per_node});
  } catch (const InputError& e) {
    rethrow_probe_failure(global, e);
  }
}

// `results --incomplete`: the configurations of the search space (--methods) on the cluster that
// no stored trial has measured, as plan rows.
void run_incomplete(const GlobalOptions& global, const Catalog& catalog, ResultsRequest r) {
  if ((r.model.empty() && r.model_file.empty()) || r.gpu.empty()) {
    throw InputError("--incomplete needs the model (--model or --model-file) and --gpu");
  }
  r.nodes = std::max<int64_t>(r.nodes, 1);
  r.gpus_per_node = std::max<int64_t>(r.gpus_per_node, 1);
  r.status.clear();
  const ModelSpec model =
      catalog.resolve_model(r.model_file.empty() ? model_key(catalog, r) : "", r.model_file);
  GpuSpec host;
  const bool cpu = is_host_cpu_name(r.gpu);
  if (cpu) host = probed_host(global, r);
  const Cluster cluster{{r.nodes, r.gpus_per_node}, cpu ? &host : &catalog.gpu(r.gpu)};
  const PlanOptions options =
      planner_options(catalog, cluster.gpu->kind, {.preset = parse_preset(r.methods)}).options;
  // No database yet: nothing is measured.
  const std::vector<TrialRecord> trials =
      std::filesystem::exists(r.db) ? stored_trials(catalog, r) : std::vector<TrialRecord>{};
  std::vector<PlanRow> rows;
  for (PlanRow& row : plan(model, cluster, options).rows) {
    if (!measured(trials, row)) rows.push_back(std::move(row));
  }
  print_plan_rows(std::cout, rows, parse_row_format(r.format));
}

void run_results(const GlobalOptions& global, const ResultsRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  if (r.incomplete) {
    run_incomplete(global, catalog, r);
    return;
  }
  const std::vector<TrialRecord> trials = stored_trials(catalog, r);
  if (trials.empty()) require_known_model(catalog, r);
  write_rows(std::cout,
             make_row_set("trial_row", trial_row_columns(), trials),
             parse_row_format(r.format));
}

void run_best(const GlobalOptions& global, const ResultsRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const auto best = best_trial(catalog, r);
  if (!best) {
    throw InputError(fmt::format("no successful trial of {} on {} x {} in {}",
                                 model_key(catalog, r),
                                 r.nodes * r.gpus_per_node,
                                 r.gpu,
                                 r.db));
  }
  const RowFormat format = parse_row_format(r.format);
  if (format == RowFormat::kJson) {  // one row: the document's "best"
    nlohmann::json doc = json_document("trial_row");
    doc["best"] = row_object(trial_row_columns(), *best);
    std::cout << json_text(doc, 2) << "\n";
    return;
  }
  write_rows(std::cout, make_row_set("trial_row", trial_row_columns(), std::vector{*best}), format);
}

}  // namespace

void add_rule_option(CLI::App& cmd, std::string& rule) {
  cmd.add_option("--rule",
                 rule,
                 "The measurement rule: gpudays (bench --strategy guided or exhaustive), "
                 "reference (bench --strategy reference: each method set's largest fitting "
                 "micro-batch alone counts), or any")
      ->check(CLI::IsMember({"gpudays", "reference", "any"}))
      ->capture_default_str();
}

void add_selection_options(CLI::App* cmd, ResultsRequest& r) {
  add_model_options(*cmd, r.model, r.model_file);
  add_gpu_option(*cmd, r.gpu, "GPU name or alias, any case, or cpu");
  add_cluster_options(*cmd, r.gpus_per_node, r.nodes);
  cmd->add_option("--db", r.db, "Results database")->capture_default_str();
}

// best and export name one model and one GPU.
void require_selection(const ResultsRequest& r) {
  if (r.model.empty() && r.model_file.empty()) {
    throw InputError("--model NAME or --model-file PATH is required");
  }
  if (r.gpu.empty()) throw InputError("--gpu NAME is required (or cpu)");
}

void add_results_commands(CLI::App& app, const GlobalOptions& global) {
  auto list = std::make_shared<ResultsRequest>();
  list->gpus_per_node = 0;  // any, unless given
  list->nodes = 0;
  CLI::App* list_cmd = app.add_subcommand(
      "results", "List the stored benchmark trials, filtered by model, GPU, count and status");
  list_cmd->add_option("--model",
                       list->model,
                       "Model name as stored, a catalog name or HuggingFace id (default: any)");
  list_cmd->add_option("--model-file", list->model_file, "The model of a model TOML file")
      ->check(CLI::ExistingFile);
  add_gpu_option(*list_cmd, list->gpu, "GPU name or alias, any case, or cpu (default: any)");
  list_cmd->add_option("--gpus-per-node", list->gpus_per_node, "GPUs per node (default: any)")
      ->check(CLI::Range(int64_t{1}, kMaxGpusPerNode));
  list_cmd->add_option("--nodes,--num-nodes", list->nodes, "Nodes (default: any)")
      ->check(CLI::Range(int64_t{1}, kMaxNodes));
  list_cmd->add_option("--status", list->status, "Only trials with this outcome")
      ->check(CLI::IsMember({"ok", "oom", "crash", "timeout", "rejected", "killed"}));
  list_cmd->add_option("--db", list->db, "Results database")->capture_default_str();
  list->rule = "any";
  add_rule_option(*list_cmd, list->rule);
  list_cmd->add_flag("--incomplete",
                     list->incomplete,
                     "List instead the configurations of the search space (--methods) on --gpu x "
                     "--nodes x --gpus-per-node that no stored trial of the model has measured, as "
                     "plan rows");
  list_cmd
      ->add_option("--methods",
                   list->methods,
                   "With --incomplete: the search space, naive, free-lunch or all")
      ->check(CLI::IsMember({"naive", "free-lunch", "all"}))
      ->capture_default_str();
  add_format_option(*list_cmd, list->format, row_format_names());
  list_cmd->footer(
      "Examples:\n  gpudays results --model pythia-160m --gpu a100 --status ok\n"
      "  gpudays results --format csv > trials.csv\n"
      "  gpudays results --incomplete --model pythia-160m --gpu a100 --gpus-per-node 4");
  list_cmd->callback([&global, list, list_cmd] {
    if (list_cmd->count("--methods") > 0 && !list->incomplete) {
      throw InputError("--methods chooses the search space of --incomplete; give --incomplete too");
    }
    run_results(global, *list);
  });

  auto best = std::make_shared<ResultsRequest>();
  CLI::App* best_cmd = app.add_subcommand(
      "best", "Print the fastest measured configuration from the benchmark results");
  add_selection_options(best_cmd, *best);
  add_rule_option(*best_cmd, best->rule);
  add_format_option(*best_cmd, best->format, row_format_names());
  best_cmd->callback([&global, best] {
    require_selection(*best);
    run_best(global, *best);
  });

  add_export_command(app, global);
}

}  // namespace gpudays
