// `gpudays models` and `gpudays gpus`: list the catalog as a table or JSON.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "common/units.h"
#include "plan/workload.h"

namespace gpudays {
namespace {

nlohmann::json model_json(const ModelSpec& m) {
  const ParamCounts p = count_params(m);
  const auto& r = m.recipe;
  nlohmann::json j = {{"name", m.name},
                      {"family", to_string(m.family)},
                      {"hf_name", m.hf_name},
                      {"params", p.total},
                      {"non_embedding_params", p.non_embedding()},
                      {"forward_flops_per_sample", forward_flops_per_sample(m)},
                      {"tokens_per_sample", m.arch.seq_len},
                      {"global_batch", r.global_batch},
                      {"train_steps", r.train_steps},
                      {"precision", to_string(r.precision)},
                      {"optimizer", to_string(r.optimizer)},
                      {"lr", r.lr},
                      {"schedule", to_string(r.schedule)},
                      {"warmup_steps", r.warmup_steps},
                      {"source_path", m.source_path}};
  j["reported"] = m.reported ? nlohmann::json{{"gpus", m.reported->gpus},
                                              {"days", m.reported->days},
                                              {"gpu", m.reported->gpu},
                                              {"source", m.reported->source}}
                             : nlohmann::json(nullptr);
  return j;
}

void list_models(const Catalog& catalog, const std::string& format) {
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const ModelSpec& m : catalog.models()) out.push_back(model_json(m));
    std::cout << out.dump(2) << "\n";
    return;
  }
  Table table({"name", "family", "params", "batch", "steps", "precision", "reported"});
  for (const ModelSpec& m : catalog.models()) {
    const std::string reported =
        m.reported ? fmt::format("{} GPUs x {:g} day{}", m.reported->gpus, m.reported->days,
                                 m.reported->days == 1.0 ? "" : "s")
                   : "";
    table.add_row({m.name, to_string(m.family), format_count(count_params(m).total),
                   std::to_string(m.recipe.global_batch), format_count(m.recipe.train_steps),
                   to_string(m.recipe.precision), reported});
  }
  table.print(std::cout);
}

nlohmann::json gpu_json(const GpuSpec& g) {
  return {{"name", g.name},
          {"display_name", g.display_name},
          {"aliases", g.aliases},
          {"architecture", g.architecture},
          {"compute_capability", g.compute_capability},
          {"peak_tflops", {{"fp32", g.peak_fp32_tflops}, {"tf32", g.peak_tf32_tflops},
                           {"fp16", g.peak_fp16_tflops}, {"bf16", g.peak_bf16_tflops}}},
          {"matmul_ceiling_fraction", g.matmul_ceiling_fraction},
          {"matmul_ceiling_measured", g.matmul_ceiling_measured},
          {"memory_bytes", g.memory_bytes},
          {"memory_bandwidth_gb_per_s", g.memory_bandwidth_gb_per_s},
          {"gpu_link", g.gpu_link},
          {"gpu_link_gb_per_s", g.gpu_link_gb_per_s},
          {"pair_bridge_gb_per_s", g.pair_bridge_gb_per_s},
          {"host_link", g.host_link},
          {"host_link_gb_per_s", g.host_link_gb_per_s},
          {"tdp_w", g.tdp_w},
          {"purchase_usd", g.purchase_usd},
          {"purchase_date", g.purchase_date},
          {"cloud_usd_per_gpu_hour", g.cloud_usd_per_gpu_hour},
          {"cloud_date", g.cloud_date},
          {"sources", g.sources}};
}

void list_gpus(const Catalog& catalog, const std::string& format) {
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const GpuSpec& g : catalog.gpus()) out.push_back(gpu_json(g));
    std::cout << out.dump(2) << "\n";
    return;
  }
  Table table({"name", "aliases", "bf16_tflops", "fp16_tflops", "tf32_tflops", "memory",
               "bandwidth_gb_s", "link", "tdp_w", "price_usd"});
  for (const GpuSpec& g : catalog.gpus()) {
    std::string aliases;
    for (const auto& a : g.aliases) aliases += (aliases.empty() ? "" : ",") + a;
    auto tflops = [](double v) { return v > 0 ? fmt::format("{:g}", v) : std::string("-"); };
    table.add_row({g.name, aliases, tflops(g.peak_bf16_tflops), tflops(g.peak_fp16_tflops),
                   tflops(g.peak_tf32_tflops), format_gib(static_cast<double>(g.memory_bytes)),
                   fmt::format("{:g}", g.memory_bandwidth_gb_per_s),
                   fmt::format("{} {:g} GB/s", g.gpu_link, g.gpu_link_gb_per_s),
                   fmt::format("{:g}", g.tdp_w), fmt::format("{:g}", g.purchase_usd)});
  }
  table.print(std::cout);
}

}  // namespace

void add_catalog_commands(CLI::App& app, const GlobalOptions& global) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* models = app.add_subcommand("models", "List the catalog's models and their recipes");
  add_format_option(*models, *format, {"table", "json"});
  models->callback([&global, format] {
    list_models(Catalog::load({global.config_dir}), *format);
  });
  auto gpu_format = std::make_shared<std::string>("table");
  CLI::App* gpus = app.add_subcommand("gpus", "List the catalog's GPUs (figures and sources)");
  add_format_option(*gpus, *gpu_format, {"table", "json"});
  gpus->callback([&global, gpu_format] {
    list_gpus(Catalog::load({global.config_dir}), *gpu_format);
  });
}

}  // namespace gpudays
