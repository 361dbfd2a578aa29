// Subcommands of the gpudays binary. Each adds itself to the CLI11 app with its own options and
// a callback; only this layer sees the whole request.
#pragma once

#include <CLI/CLI.hpp>

#include <span>
#include <string>
#include <vector>

#include "catalog/gpu_spec.h"
#include "catalog/host_cpu.h"
#include "common/error.h"
#include "search_space/method_fields.h"
#include "search_space/search_space.h"

namespace gpudays {

struct GlobalOptions {
  std::string config_dir;  // --config-dir
  // Whether this build has the trainer (LibTorch): `trial`, and with it the host-CPU probe
  // (`trial --probe-device cpu`). main.cpp sets it from the build before adding the commands.
  bool has_trainer = true;
};

// "this build has no trainer (built without LibTorch); WHAT needs the LibTorch build"
std::string needs_trainer(const std::string& what);
// For a failure `e` of a look-up that may measure the host CPU (plan's device, results
// --incomplete): in a build without the trainer, a probe that could not run is said in one line
// (a probe a LibTorch build cached next to --db still serves); anything else is rethrown as is.
// Call it in the handler that caught `e`.
[[noreturn]] void rethrow_probe_failure(const GlobalOptions& global, const InputError& e);

void add_catalog_commands(CLI::App& app, const GlobalOptions& global);  // models, gpus
void add_plan_command(CLI::App& app, const GlobalOptions& global);
void add_results_commands(CLI::App& app, const GlobalOptions& global);  // results, best, export
void add_bench_command(CLI::App& app, const GlobalOptions& global);
void add_sweep_command(CLI::App& app, const GlobalOptions& global);      // a grid of benches
void add_trial_command(CLI::App& app, const GlobalOptions& global);      // LibTorch builds only
void add_train_command(CLI::App& app, const GlobalOptions& global);      // LibTorch builds only
void add_export_hf_command(CLI::App& app, const GlobalOptions& global);  // LibTorch builds only
void add_cost_command(CLI::App& app, const GlobalOptions& global);
void add_report_command(CLI::App& app, const GlobalOptions& global);
void add_validate_command(CLI::App& app, const GlobalOptions& global);
void add_paper_command(CLI::App& app, const GlobalOptions& global);  // paper
void add_fit_command(CLI::App& app, const GlobalOptions& global);    // fit
void add_jobs_command(CLI::App& app, const GlobalOptions& global);   // Slurm jobs submitted
void add_data_commands(CLI::App& app, const GlobalOptions& global);  // data tokenize|images|inspect

// --model NAME and --model-file PATH (resolved with Catalog::resolve_model), shared by commands.
void add_model_options(CLI::App& cmd, std::string& model, std::string& model_file);

// --gpu NAME (alias --gpu-type, the reference's spelling): a catalog name or alias, any case.
void add_gpu_option(CLI::App& cmd, std::string& gpu, const std::string& help);

// The flags that pin fields of one configuration ("what if"), shared by plan and export: one per
// method field (search_space/method_fields.h), --LABEL on|off or --LABEL NAME (--free-lunch,
// --checkpointing, --sharding, --offloading), and --micro-batch-size N.
struct PinFlags {
  std::vector<std::string> methods = std::vector<std::string>(method_fields().size());  // "": free
  int64_t micro_batch_size = 0;  // 0: not pinned
  ConfigurationPin pin() const;  // throws InputError for an unknown sharding name
};
void add_pin_options(CLI::App& cmd, PinFlags& flags);

// --gpus-per-node N and --nodes K (alias --num-nodes) within the planner's bounds
// (search_space/search_space.h).
void add_cluster_options(CLI::App& cmd,
                         int64_t& gpus_per_node,
                         int64_t& nodes,
                         const std::string& gpus_per_node_help = "GPUs per node");

// --pair-bridge on|off and --peer-to-peer on|off: the node's links where its GPU file's defaults
// (`gpudays gpus`; docs/planner.md) or the cluster file's partition do not hold; unset: those.
void add_link_options(CLI::App& cmd, LinkSettings& links);

// Every integer option of `app` and its subcommands takes decimal integers within its type alone,
// every real option finite numbers alone (CLI11 by itself reads 010 as octal, saturates
// 99999999999999999999 to 2^63 - 1 and accepts nan). Called once the commands are added.
void check_number_options(CLI::App& app);
// Every option that names a model, a GPU or a partition takes names of at most kMaxNameBytes
// (catalog/toml_fields.h), as the files that define them do. Called once the commands are added.
void check_name_options(CLI::App& app);
// CLI11 drops the empty items of a comma-separated list (`--counts 1,,2` reads as 1,2, `--gpus ,`
// as no item): each list option's arguments on the command line are checked for them before it is
// parsed. Throws InputError naming the option.
void check_list_arguments(const CLI::App& app, int argc, char** argv);
// An option of one value given more than once (CLI11: "At Most 1 required but received 2"): the
// message naming it and its values; "" when no parsed option was.
std::string repeated_option_problem(CLI::App& app);

// --format validator shared by the commands.
// A finite number in [low, high] ((low, high] with low_open); the message names the range.
CLI::Validator number_check(double low, double high, bool low_open);

CLI::Option* add_format_option(CLI::App& cmd,
                               std::string& format,
                               const std::vector<std::string>& choices);

// --pair-bridge and --peer-to-peer name GPU links: InputError when given for the host CPU.
void refuse_links_on_cpu(const LinkSettings& links);

// --db (`db_option`) gives measured trials to --source bench: given with --source plan, which
// reads none, InputError (the flag would do nothing).
void refuse_db_without_bench(const CLI::Option* db_option, const std::string& source);

}  // namespace gpudays
