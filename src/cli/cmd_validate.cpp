// `gpudays validate`: the planner against published measurements (configs/measurements). Each case
// is planned with its published configuration pinned; the logic is accuracy/validate.h's, this file
// parses the request and prints the report as a table, JSON or CSV.
#include <algorithm>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "accuracy/calibration_fit.h"
#include "accuracy/validate.h"
#include "catalog/calibration_file.h"
#include "catalog/catalog.h"
#include "catalog/measurement.h"
#include "cli/commands.h"
#include "common/error.h"
#include "plan/fitted_constants.h"
#include "rows/validation_rows.h"

namespace gpudays {
namespace {

struct ValidateRequest {
  std::string split;  // fit, check or empty (both)
  std::string gpu;
  std::string case_name;  // one case: its name or "source/name"
  bool ops = false;       // the selected case's operations (plan/op_breakdown.h)
  bool include_untrusted = false;
  std::string format = "table";
  int64_t worst = 5;
  bool uncalibrated = false;  // the planner's own constants, without configs/calibration.toml
  bool fit = false;           // fit the constants on the fitting half; print calibration.toml
  bool format_given = false;
  bool worst_given = false;
};

void run_validate(const GlobalOptions& global, const ValidateRequest& r) {
  const Catalog catalog = Catalog::load({global.config_dir});
  if (r.fit) {
    if (!r.split.empty() || !r.gpu.empty() || !r.case_name.empty() || r.ops || r.uncalibrated ||
        r.include_untrusted) {
      throw InputError(
          "--fit uses the whole fitting half from the planner's own constants; it "
          "takes no --split, --gpu, --case, --ops, --uncalibrated or --include-untrusted");
    }
    if (r.format_given || r.worst_given) {  // it prints calibration.toml, no report
      throw InputError(
          "--fit prints configs/calibration.toml (TOML), not a report: it takes no --format or "
          "--worst");
    }
    std::cout << fitted_calibration_toml(catalog);
    return;
  }
  ValidationFilter filter;
  if (r.split == "fit") filter.split = MeasurementSplit::kFit;
  if (r.split == "check") filter.split = MeasurementSplit::kCheck;
  if (!r.gpu.empty()) filter.gpu = catalog.gpu(r.gpu).name;
  filter.case_name = r.case_name;
  if (r.ops && r.case_name.empty()) {
    throw InputError(
        "--ops lists the operations of one case: name it with --case (its name or "
        "source/name, as `gpudays validate` lists them)");
  }
  if (r.ops && r.format == "csv") {
    throw InputError("--ops lists operations in the table or JSON output, not --format csv");
  }
  const std::vector<MeasurementFile> files = load_measurements(catalog);
  if (files.empty()) {
    throw InputError(fmt::format("no published measurement: {}/measurements has no *.toml file",
                                 catalog.config_dir()));
  }
  const std::vector<Measurement> cases = select_measurements(files, filter);
  if (cases.empty() && !r.case_name.empty()) {
    throw InputError(fmt::format(
        "no published measurement named '{}'{} (`gpudays validate` lists the cases: their name "
        "or source/name)",
        r.case_name,
        r.split.empty() && r.gpu.empty() ? "" : " matches --split and --gpu"));
  }
  if (cases.empty()) throw InputError("no published measurement matches --split and --gpu");
  if (r.ops && cases.size() > 1) {
    std::string names;
    for (const Measurement& m : cases)
      names += (names.empty() ? "" : ", ") + m.source_id + "/" + m.name;
    throw InputError(fmt::format("--case '{}' names {} cases ({}): give one as source/name",
                                 r.case_name,
                                 cases.size(),
                                 names));
  }
  ValidationOptions options;
  options.include_untrusted = r.include_untrusted;
  options.worst = static_cast<size_t>(r.worst);
  options.selected_gpu = filter.gpu;
  options.selected_case = filter.case_name;
  options.op_breakdown = r.ops;
  const CalibrationFile calibration =
      r.uncalibrated ? CalibrationFile{} : load_calibration(catalog);
  const ValidationReport report =
      validate(cases, catalog, calibrated_plan_options(calibration), options);
  // Which constants were planned with: the fitted file, or the planner's own.
  const std::string constants =
      calibration.path.empty() ? "the planner's own (uncalibrated)" : calibration.path;
  if (r.format == "json") {
    print_json(std::cout, report, calibration.path);
  } else if (r.format == "csv") {
    cases_table(report).print_csv(std::cout);
  } else {
    std::cout << "Planner constants: " << constants << "\n";
    print_table(std::cout, report);
  }
}

}  // namespace

void add_validate_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<ValidateRequest>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Compare the planner with published training measurements (configs/measurements): each "
      "case planned with its published configuration pinned, its error, MAPE per GPU and split.");
  cmd->add_option("--split", r->split, "Only one half of the validation set: fit or check")
      ->check(CLI::IsMember({"fit", "check"}));
  cmd->add_option("--gpu", r->gpu, "Only the cases on this GPU (name or alias)");
  cmd->add_option(
         "--case", r->case_name, "Only this case: its name or source/name, as the table lists them")
      ->check(CLI::Validator(
          [](std::string& name) { return name.empty() ? std::string("is empty") : ""; }, "NAME"));
  cmd->add_flag("--ops",
                r->ops,
                "With --case: also list where a micro-step of the case's planned configuration "
                "goes, operation by operation (as `plan --ops`; table or JSON output)");
  cmd->add_flag("--include-untrusted",
                r->include_untrusted,
                "Also plan untrusted sources' cases (listed, never in a MAPE)");
  add_format_option(*cmd, r->format, {"table", "json", "csv"})->each([r](const std::string&) {
    r->format_given = true;
  });
  cmd->add_option("--worst", r->worst, "How many worst cases to list")
      ->check(CLI::Range(int64_t{0}, int64_t{1000}))
      ->capture_default_str()
      ->each([r](const std::string&) { r->worst_given = true; });
  cmd->add_flag("--uncalibrated",
                r->uncalibrated,
                "Plan with the planner's own constants, without configs/calibration.toml");
  cmd->add_flag("--fit",
                r->fit,
                "Fit the efficiency constants on the fitting half and print them as "
                "configs/calibration.toml");
  cmd->footer(
      "Examples:\n  gpudays validate\n  gpudays validate --split check --gpu h100 "
      "--format json\n  gpudays validate --case lambda-deeplearning-benchmark/rtx4090-1gpu-fp16 "
      "--ops\n  gpudays validate --fit > configs/calibration.toml");
  cmd->callback([&global, r] { run_validate(global, *r); });
}

}  // namespace gpudays
