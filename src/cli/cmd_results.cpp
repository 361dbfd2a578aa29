// `gpudays best` (the optimal measured row, like the reference's) and `gpudays export` (the chosen
// configuration as HuggingFace TrainingArguments, DeepSpeed configuration or gpudays run file).
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/export.h"
#include "catalog/catalog.h"
#include "catalog/host_cpu.h"
#include "catalog/model_loader.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/planner.h"
#include "results/results_db.h"

namespace gpudays {
namespace {

struct ResultsRequest {
  std::string model;
  std::string gpu;
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  std::string db = "gpudays.db";
  std::string format = "table";
  std::string source = "bench";
  std::string out;
};

// The results key of --gpu: the host CPU's name, or a catalog GPU's.
std::string gpu_key(const Catalog& catalog, const std::string& gpu) {
  return is_host_cpu_name(gpu) ? kHostCpuName : catalog.gpu(gpu).name;
}

std::optional<TrialRecord> best_trial(const Catalog& catalog, const ResultsRequest& r) {
  ResultsDb db = ResultsDb::open({r.db, /*read_only=*/true});
  // Any model name the results hold: catalog models and models benchmarked from a file.
  const TrialFilter filter{r.model, gpu_key(catalog, r.gpu), r.nodes, r.gpus_per_node};
  const std::vector<TrialRecord> trials = db.query(filter);
  const TrialRecord* best = fastest_ok(trials);
  return best == nullptr ? std::nullopt : std::optional<TrialRecord>(*best);
}

void print_best(const ResultsRequest& r, const TrialRecord& t) {
  if (r.format == "json") {
    std::cout << nlohmann::json{{"model", t.model}, {"gpu", t.gpu},
                                {"device_name", t.measured.device_name},
                                {"num_nodes", t.cluster.num_nodes},
                                {"gpus_per_node", t.cluster.gpus_per_node},
                                {"methods", describe(t.config.methods)},
                                {"micro_batch_size", t.config.micro_batch_size},
                                {"grad_acc_steps", t.config.grad_acc_steps},
                                {"step_time_s", t.step_time_s()},
                                {"predicted_step_time_s", t.predicted_step_time_s},
                                {"training_days", t.training_days}, {"gpu_days", t.gpu_days},
                                {"mfu", t.mfu}, {"peak_memory_bytes", t.measured.peak_memory_bytes},
                                {"git_commit", t.git_commit}, {"created_at", t.created_at}}
                     .dump(2)
              << "\n";
    return;
  }
  Table table({"model", "hardware", "methods", "micro_batch", "grad_acc", "step_s", "predicted_s",
               "days", "gpu_days", "mfu"});
  table.add_row({t.model,
                 fmt::format("{} x {} ({})", t.cluster.world_size(), t.gpu, t.measured.device_name),
                 describe(t.config.methods), std::to_string(t.config.micro_batch_size),
                 std::to_string(t.config.grad_acc_steps), fmt::format("{:.3f}", t.step_time_s()),
                 fmt::format("{:.3f}", t.predicted_step_time_s),
                 fmt::format("{:.1f}", t.training_days), fmt::format("{:.1f}", t.gpu_days),
                 fmt::format("{:.1f}%", 100 * t.mfu)});
  table.print(std::cout);
}

void run_best(const GlobalOptions& global, const ResultsRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const auto best = best_trial(catalog, r);
  if (!best) {
    throw InputError(fmt::format("no successful trial of {} on {} x {} in {}", r.model,
                                 r.nodes * r.gpus_per_node, r.gpu, r.db));
  }
  print_best(r, *best);
}

ExportRequest choose(const Catalog& catalog, const ResultsRequest& r) {
  const ModelSpec& model = catalog.model(r.model);
  ExportRequest e{&model, gpu_key(catalog, r.gpu), {r.nodes, r.gpus_per_node}, {}, false};
  const bool host_cpu = is_host_cpu_name(e.gpu);
  if (!host_cpu) e.tf32_available = catalog.gpu(e.gpu).supports_tf32();
  if (r.source == "plan") {
    if (host_cpu) {
      throw InputError("--source plan needs a catalog GPU; for the host CPU use --source bench "
                       "(or see `gpudays plan --device cpu`)");
    }
    const PlanResult p = plan(model, Cluster{{r.nodes, r.gpus_per_node}, &catalog.gpu(e.gpu)}, {});
    if (!p.best) throw InputError(fmt::format("nothing fits {} on that hardware", model.name));
    e.config = p.best->config;
    return e;
  }
  const auto best = best_trial(catalog, r);
  if (!best) {
    throw InputError(fmt::format("no successful trial of {} on {} x {} in {} (or use --source plan)",
                                 r.model, r.nodes * r.gpus_per_node, r.gpu, r.db));
  }
  e.config = best->config;
  return e;
}

void run_export(const GlobalOptions& global, const ResultsRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  const ExportRequest e = choose(catalog, r);
  std::string text;
  if (r.format == "hf") {
    text = hf_training_arguments(e).dump(2) + "\n";
  } else if (r.format == "deepspeed") {
    const nlohmann::json ds = deepspeed_config(e);
    if (ds.is_null()) {
      throw InputError(fmt::format("the chosen configuration ({}) uses no ZeRO stage; a DeepSpeed "
                                   "configuration applies to zero_1, zero_2 and zero_3",
                                   describe(e.config.methods)));
    }
    text = ds.dump(2) + "\n";
  } else {
    text = run_config_toml(e);
  }
  if (r.out.empty()) {
    std::cout << text;
    return;
  }
  std::ofstream out(r.out);
  if (!(out << text)) throw InputError(fmt::format("cannot write {}", r.out));
}

void add_selection_options(CLI::App* cmd, ResultsRequest& r) {
  cmd->add_option("--model", r.model, "Catalog model name")->required();
  cmd->add_option("--gpu", r.gpu, "GPU name or alias, or cpu")->required();
  add_cluster_options(*cmd, r.gpus_per_node, r.nodes);
  cmd->add_option("--db", r.db, "Results database")->capture_default_str();
}

}  // namespace

void add_results_commands(CLI::App& app, const GlobalOptions& global) {
  auto best = std::make_shared<ResultsRequest>();
  CLI::App* best_cmd = app.add_subcommand(
      "best", "Print the fastest measured configuration from the benchmark results");
  add_selection_options(best_cmd, *best);
  add_format_option(*best_cmd, best->format, {"table", "json"});
  best_cmd->callback([&global, best] { run_best(global, *best); });

  auto exp = std::make_shared<ResultsRequest>();
  exp->format = "hf";
  CLI::App* export_cmd = app.add_subcommand(
      "export",
      "Write the chosen configuration as HuggingFace TrainingArguments (hf), a DeepSpeed "
      "configuration (deepspeed) or a gpudays run file (toml)");
  add_selection_options(export_cmd, *exp);
  add_format_option(*export_cmd, exp->format, {"hf", "deepspeed", "toml"});
  export_cmd->add_option("--source", exp->source, "bench: the fastest measured; plan: the planner's")
      ->check(CLI::IsMember({"bench", "plan"}))
      ->capture_default_str();
  export_cmd->add_option("--out", exp->out, "Output file (default: standard output)");
  export_cmd->callback([&global, exp] { run_export(global, *exp); });
}

}  // namespace gpudays
