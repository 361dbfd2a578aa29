// `gpudays paper`: the reference paper's published training times beside gpudays' prediction or
// measurement for the same model and hardware, the MFU each published time implies, and the
// cells that are physically impossible (advise/paper_compare.h).
#include <iostream>

#include <fmt/format.h>

#include "advise/paper_compare.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "common/error.h"
#include "common/json_text.h"
#include "report/paper_section.h"

namespace gpudays {
namespace {

struct PaperRequest {
  std::string source = "plan";
  std::string db = "gpudays.db";
  std::string methods = "all";
  std::string format = "table";
  std::string rule = "gpudays";
  CLI::Option* db_option = nullptr;
};

void print_paper_table(std::ostream& out,
                       const std::vector<PaperCell>& cells,
                       const std::string& source_name) {
  out << fmt::format(
      "The reference paper's training days beside gpudays' ({}); implied MFU = the planner's "
      "model FLOPs of the recipe / (days x 86,400 s x GPUs x dense peak of the recipe's dtype)\n",
      source_name);
  write_rows(out, make_row_set("paper_cell", paper_columns(), cells), RowFormat::kTable);
  for (const PaperCell& c : cells) {
    if (c.implied.impossible) out << fmt::format("{}: {}\n", c.name, c.verdict);
  }
  out << "Sources:\n";
  for (const PaperCell& c : cells) {
    const std::string settings =
        c.published_settings.empty() ? "" : " (published settings: " + c.published_settings + ")";
    out << fmt::format("  {}{}: {}\n", c.name, settings, c.citation);
  }
}

void run_paper(const GlobalOptions& global, const PaperRequest& r) {
  refuse_db_without_bench(r.db_option, r.source);
  const Catalog catalog = Catalog::load({global.config_dir});
  TimeSourceOptions source_options;
  source_options.kind = parse_source_flag(r.source);
  source_options.plan = cost_plan_options(CostRequest{}, catalog);
  source_options.plan.preset = parse_preset(r.methods);
  source_options.results_path = r.db;
  source_options.catalog = &catalog;
  source_options.rule = parse_measurement_rule(r.rule);
  if (source_options.kind != TimeSourceKind::kBench && r.rule != "gpudays") {
    throw InputError("--rule reference applies to --source bench");
  }
  const std::unique_ptr<TrainingTimeSource> source = make_time_source(source_options);
  const std::vector<PaperCell> cells = compare_with_paper(catalog, *source);
  const RowFormat format = parse_row_format(r.format);
  const RowSet rows = make_row_set("paper_cell", paper_columns(), cells);
  if (format == RowFormat::kJson) {
    nlohmann::json doc = json_document("paper_cell");
    doc["source"] = source->name();
    doc["rows"] = rows_json(rows);
    std::cout << json_text(doc, 2) << "\n";
  } else if (format == RowFormat::kTable) {
    print_paper_table(std::cout, cells, source->name());
  } else {
    write_rows(std::cout, rows, format);
  }
}

}  // namespace

void add_paper_command(CLI::App& app, const GlobalOptions& global) {
  auto r = std::make_shared<PaperRequest>();
  CLI::App* cmd = app.add_subcommand(
      "paper",
      "The reference paper's published training days ('$100K or 100 Days', arXiv:2410.23261, and "
      "its Table 1 of original runs) beside gpudays' for the same model and hardware, with the "
      "MFU each published time implies; cells above the GPU's matmul ceiling are flagged as "
      "physically impossible.");
  cmd->add_option("--source",
                  r->source,
                  "Where gpudays' days come from: plan (the analytic planner) or bench (the "
                  "fastest measured trial in --db)")
      ->check(CLI::IsMember({"plan", "bench"}))
      ->capture_default_str();
  r->db_option =
      cmd->add_option("--db", r->db, "Results database for --source bench")->capture_default_str();
  cmd->add_option("--rule",
                  r->rule,
                  "With --source bench: whose measurements: gpudays (the fastest trial of "
                  "gpudays' strategies) or reference (bench --strategy reference: the "
                  "reference benchmark's largest fitting micro-batch, timed on gpudays' clock)")
      ->check(CLI::IsMember({"gpudays", "reference"}))
      ->capture_default_str();
  cmd->add_option("--methods", r->methods, "Planner method preset: naive, free-lunch or all")
      ->check(CLI::IsMember({"naive", "free-lunch", "all"}))
      ->capture_default_str();
  add_format_option(*cmd, r->format, row_format_names());
  cmd->footer(
      "Data: configs/measurements/100k-or-100-days-paper.toml (the paper's benchmark cells, each "
      "with its citation) and the catalog models' [reported] runs. docs/paper.md.\nExamples:\n"
      "  gpudays paper\n"
      "  gpudays paper --format csv\n"
      "  gpudays paper --source bench --rule reference --db gpudays.db");
  cmd->callback([&global, r] { run_paper(global, *r); });
}

}  // namespace gpudays
