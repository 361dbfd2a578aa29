// `gpudays export`: the chosen configuration (exports/export_choice.h) as HuggingFace
// TrainingArguments, a DeepSpeed configuration or a gpudays run file.
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/host_cpu.h"
#include "cli/results_request.h"
#include "common/error.h"
#include "common/json_text.h"
#include "common/output_files.h"
#include "exports/export.h"
#include "exports/export_choice.h"
#include "exports/transformers_version.h"

namespace gpudays {
namespace {

// The backend asked for: --backend, or DeepSpeed for --format deepspeed; none: the row's.
std::optional<ExportBackend> wanted_backend(const ResultsRequest& r) {
  if (!r.backend.empty()) return parse_export_backend(r.backend);
  if (r.format == "deepspeed") return ExportBackend::kDeepSpeed;
  return std::nullopt;
}

ExportSelection selection(const ResultsRequest& r, const ModelSpec& model) {
  ExportSelection s{r.pins.pin(), wanted_backend(r)};
  if (r.grad_acc_steps > 0) {
    pin_accumulation(s.pin, model, r.nodes * r.gpus_per_node, r.grad_acc_steps);
  }
  return s;
}

// torch_compile: as asked, else where the chosen free-lunch was measured; never for Mamba.
bool torch_compile(const ResultsRequest& r, const ExportRequest& e) {
  const bool mamba = e.model->family == Family::kMamba;
  if (r.torch_compile == "on" && mamba) {
    throw InputError(
        "--torch-compile on: Mamba is never exported compiled (transformers' Mamba calls "
        "mamba-ssm's kernels, which torch.compile does not trace)");
  }
  if (!r.torch_compile.empty()) return r.torch_compile == "on";
  return r.source == "bench" && e.config.methods.free_lunch && !mamba;
}

Configuration measured_config(const Catalog& catalog, const ResultsRequest& r, const ModelSpec& m) {
  if (auto config = measured_choice(stored_trials(catalog, r), selection(r, m))) return *config;
  throw InputError(
      fmt::format("no successful trial of {} on {} x {} in {}{} (or use --source plan)",
                  m.name,
                  r.nodes * r.gpus_per_node,
                  r.gpu,
                  r.db,
                  selection_text(selection(r, m))));
}

ExportRequest choose(const Catalog& catalog, const ResultsRequest& r, const ModelSpec& model) {
  ExportRequest e{&model, gpu_key(catalog, r.gpu), {r.nodes, r.gpus_per_node}, {}, false};
  if (!r.model_file.empty()) e.model_file = absolute_path(r.model_file);
  e.auto_values = r.auto_values;
  const bool host_cpu = is_host_cpu_name(e.gpu);
  if (!host_cpu) e.tf32_available = catalog.gpu(e.gpu).supports_tf32();
  if (r.source == "bench") {
    e.config = measured_config(catalog, r, model);
    e.torch_compile = torch_compile(r, e);
    return e;
  }
  if (host_cpu) {
    throw InputError(
        "--source plan needs a catalog GPU; for the host CPU use --source bench "
        "(or see `gpudays plan --device cpu`)");
  }
  const PlannedChoice choice =
      planned_choice(catalog, selection(r, model), model, Cluster{e.cluster, &catalog.gpu(e.gpu)});
  if (!choice.misfit.empty()) {
    std::cerr << "warning: " << describe(choice.config) << " is predicted not to fit ("
              << choice.misfit << "); exported as asked\n";
  }
  e.config = choice.config;
  e.torch_compile = torch_compile(r, e);
  return e;
}

// --out names a file that is none of the export's inputs (the model file, the results database, a
// file of the catalog): writing it must not replace what this or a later command reads.
void check_out(const Catalog& catalog, const ResultsRequest& r) {
  if (r.auto_values && r.format == "toml") {
    throw InputError(
        "--auto: \"auto\" values belong to a DeepSpeed configuration (--format deepspeed, or "
        "hf with a DeepSpeed backend); a run file has none");
  }
  if (r.out.empty()) return;  // standard output (an empty --out is refused as given)
  check_output_file(r.out, "--out");
  refuse_output_over_inputs(r.out, {r.model_file, r.source == "bench" ? r.db : ""}, "--out");
  // What the catalog reads: its folders of TOML files and the fitted constants.
  const std::filesystem::path dir(catalog.config_dir());
  for (const char* read : {"models", "gpus", "measurements", "cost"}) {
    if (inside_directory(r.out, (dir / read).string())) {
      throw InputError(fmt::format(
          "--out {} is inside the catalog's {}; write it elsewhere", r.out, (dir / read).string()));
    }
  }
  refuse_output_over_inputs(r.out, {(dir / "calibration.toml").string()}, "--out");
}

void run_export(const GlobalOptions& global, const ResultsRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  check_out(catalog, r);
  const ModelSpec model = catalog.resolve_model(r.model, r.model_file);
  ExportRequest e = choose(catalog, r, model);
  if (r.format == "hf") {
    const TransformersTarget target = choose_transformers(r.transformers, "python3");
    e.transformers_major = target.major;
    std::cerr << "note: TrainingArguments for transformers " << target.major << " (" << target.basis
              << ")\n";
    for (const std::string& note : hf_export_notes(e)) std::cerr << "note: " << note << "\n";
  }
  if (r.format != "toml") {
    for (const std::string& note : export_notes(e)) std::cerr << "note: " << note << "\n";
  }
  std::string text;
  if (r.format == "hf") {
    text = json_text(hf_training_arguments(e), 2) + "\n";
  } else if (r.format == "deepspeed") {
    const nlohmann::json ds = deepspeed_config(e);
    if (ds.is_null()) {
      throw InputError(
          fmt::format("the chosen configuration ({}) uses no ZeRO stage; a DeepSpeed "
                      "configuration applies to zero_1, zero_2 and zero_3",
                      describe(e.config.methods)));
    }
    text = json_text(ds, 2) + "\n";
  } else {
    text = run_config_toml(e);
  }
  if (r.out.empty()) {
    std::cout << text;
    return;
  }
  write_file_atomically(r.out, text);
}

// export's choice of configuration: the backend, "auto" values, and pinned fields.
void add_export_choice_options(CLI::App& cmd, ResultsRequest& r) {
  cmd.add_option("--backend",
                 r.backend,
                 "deepspeed (ZeRO), fsdp (FSDP2 via accelerate) or ddp: the fastest configuration "
                 "that backend runs (default: the fastest configuration's own; deepspeed for "
                 "--format deepspeed)")
      ->check(CLI::IsMember({"deepspeed", "fsdp", "ddp"}));
  cmd.add_flag("--auto",
               r.auto_values,
               "DeepSpeed values that HuggingFace's Trainer fills in from TrainingArguments as "
               "\"auto\" (for use through HF at any GPU count)");
  add_pin_options(cmd, r.pins);
  cmd.add_option("--gradient-accumulation-steps",
                 r.grad_acc_steps,
                 "Pin the micro-steps per optimizer step: the micro-batch becomes the per-GPU "
                 "batch divided by it (checked against --micro-batch-size)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd.add_option("--transformers",
                 r.transformers,
                 "--format hf: TrainingArguments for transformers 4 (FSDP1, "
                 "gradient_checkpointing, the fsdp option string; the reference pins 4.42) or 5 "
                 "(default: the major version python3 on PATH has installed, else 5)")
      ->check(CLI::IsMember({"4", "5"}));
  cmd.add_option("--torch-compile",
                 r.torch_compile,
                 "--format hf: torch_compile on or off (default: on where a measured "
                 "configuration (--source bench) used free-lunch; never for Mamba)")
      ->check(CLI::IsMember({"on", "off"}));
}

}  // namespace

void add_export_command(CLI::App& app, const GlobalOptions& global) {
  auto exp = std::make_shared<ResultsRequest>();
  exp->format = "hf";
  CLI::App* export_cmd = app.add_subcommand(
      "export",
      "Write the chosen configuration as HuggingFace TrainingArguments (hf), a DeepSpeed "
      "configuration (deepspeed) or a gpudays run file (toml)");
  add_selection_options(export_cmd, *exp);
  add_format_option(*export_cmd, exp->format, {"hf", "deepspeed", "toml"});
  export_cmd
      ->add_option("--source", exp->source, "bench: the fastest measured; plan: the planner's")
      ->check(CLI::IsMember({"bench", "plan"}))
      ->capture_default_str();
  export_cmd->add_option("--out", exp->out, "Output file (default: standard output)");
  add_export_choice_options(*export_cmd, *exp);
  export_cmd->footer(
      "Examples:\n  gpudays export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan\n"
      "  gpudays export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan "
      "--backend fsdp\n"
      "  gpudays export --model pythia-1b --gpu a100 --gpus-per-node 4 --source plan "
      "--format deepspeed --auto --checkpointing on\n"
      "Notes on what the target cannot express go to standard error.");
  export_cmd->callback([&global, exp, export_cmd] {
    require_selection(*exp);
    if (export_cmd->count("--out") > 0) check_output_file(exp->out, "--out");
    if (exp->format != "hf" && (!exp->transformers.empty() || !exp->torch_compile.empty())) {
      throw InputError("--transformers and --torch-compile apply to --format hf alone");
    }
    run_export(global, *exp);
  });
}

}  // namespace gpudays
