// The model and GPU rows' column lists.
#include "rows/catalog_rows.h"

#include "catalog/gpu_peak.h"
#include "catalog/param_count.h"
#include "plan/workload.h"

namespace gpudays {

using D = Display;

// The model row: a catalog model, its size and its recipe.
const std::vector<Column<ModelSpec>>& model_columns() {
  using M = ModelSpec;
  const auto reported = [](const char* name, auto get, Display display = D::kHidden) {
    return Column<M>{
        name, [get](const M& m) { return m.reported ? Cell{get(*m.reported)} : Cell{}; }, display};
  };
  static const std::vector<Column<M>> kColumns = {
      {"name", [](const M& m) { return Cell{m.name}; }, D::kPlain},
      {"family", [](const M& m) { return Cell{to_string(m.family)}; }, D::kPlain},
      {"hf_name", [](const M& m) { return Cell{m.hf_name}; }},
      {"params", [](const M& m) { return Cell{count_params(m).total}; }, D::kCount},
      {"non_embedding_params", [](const M& m) { return Cell{count_params(m).non_embedding()}; }},
      {"forward_flops_per_sample", [](const M& m) { return Cell{forward_flops_per_sample(m)}; }},
      {"tokens_per_sample", [](const M& m) { return Cell{m.arch.seq_len}; }},
      {"global_batch", [](const M& m) { return Cell{m.recipe.global_batch}; }, D::kPlain},
      {"train_steps", [](const M& m) { return Cell{m.recipe.train_steps}; }, D::kCount},
      {"precision", [](const M& m) { return Cell{to_string(m.recipe.precision)}; }, D::kPlain},
      {"optimizer", [](const M& m) { return Cell{to_string(m.recipe.optimizer)}; }},
      {"lr", [](const M& m) { return Cell{m.recipe.lr}; }},
      {"schedule", [](const M& m) { return Cell{to_string(m.recipe.schedule)}; }},
      {"warmup_steps", [](const M& m) { return Cell{m.recipe.warmup_steps}; }},
      reported(
          "reported_gpus", [](const ReportedRun& r) { return r.gpus; }, D::kPlain),
      reported(
          "reported_days", [](const ReportedRun& r) { return r.days; }, D::kPlain),
      reported("reported_gpu", [](const ReportedRun& r) { return r.gpu; }),
      reported("reported_accelerator", [](const ReportedRun& r) { return r.accelerator; }),
      reported("reported_source", [](const ReportedRun& r) { return r.source; }),
      {"source_path", [](const M& m) { return Cell{m.source_path}; }},
  };
  return kColumns;
}

// The GPU row: a catalog GPU's figures, each table's source beside them.
const std::vector<Column<GpuSpec>>& gpu_columns() {
  using G = GpuSpec;
  const auto source = [](const char* name, const char* table) {
    return Column<G>{name, [table](const G& g) {
                       const auto it = g.sources.find(table);
                       return it == g.sources.end() ? Cell{} : Cell{it->second};
                     }};
  };
  const auto aliases = [](const G& g) {
    std::string joined;
    for (const auto& a : g.aliases) {
      if (!joined.empty()) joined += ',';
      joined += a;
    }
    return Cell{joined};
  };
  static const std::vector<Column<G>> kColumns = {
      {"name", [](const G& g) { return Cell{g.name}; }, D::kPlain},
      {"display_name", [](const G& g) { return Cell{g.display_name}; }},
      {"aliases", aliases, D::kPlain},
      {"architecture", [](const G& g) { return Cell{g.architecture}; }},
      {"compute_capability", [](const G& g) { return Cell{g.compute_capability}; }},
      {"peak_bf16_tflops", [](const G& g) { return Cell{g.peak_bf16_tflops}; }, D::kPlain},
      {"peak_fp16_tflops", [](const G& g) { return Cell{g.peak_fp16_tflops}; }, D::kPlain},
      {"peak_tf32_tflops", [](const G& g) { return Cell{g.peak_tf32_tflops}; }, D::kPlain},
      {"peak_fp32_tflops", [](const G& g) { return Cell{g.peak_fp32_tflops}; }},
      {"matmul_ceiling_fraction", [](const G& g) { return Cell{g.matmul_ceiling_fraction}; }},
      // fp32 on the CUDA cores; the tensor-core fraction where the GPU file gives none.
      {"fp32_matmul_ceiling_fraction",
       [](const G& g) {
         return Cell{matmul_peak(g, Precision::kFp32, /*tf32_allowed=*/false).ceiling_fraction};
       }},
      {"matmul_ceiling_measured", [](const G& g) { return Cell{g.matmul_ceiling_measured}; }},
      {"memory_bytes", [](const G& g) { return Cell{g.memory_bytes}; }, D::kGib},
      {"memory_bandwidth_gb_per_s",
       [](const G& g) { return Cell{g.memory_bandwidth_gb_per_s}; },
       D::kPlain},
      {"gpu_link", [](const G& g) { return Cell{g.gpu_link}; }, D::kPlain},
      {"gpu_link_gb_per_s", [](const G& g) { return Cell{g.gpu_link_gb_per_s}; }, D::kPlain},
      {"pair_bridge_gb_per_s", [](const G& g) { return Cell{g.pair_bridge_gb_per_s}; }},
      {"pair_bridge", [](const G& g) { return Cell{g.pair_bridge}; }},
      {"peer_to_peer", [](const G& g) { return Cell{g.peer_to_peer}; }},
      {"host_link", [](const G& g) { return Cell{g.host_link}; }},
      {"host_link_gb_per_s", [](const G& g) { return Cell{g.host_link_gb_per_s}; }},
      {"tdp_w", [](const G& g) { return Cell{g.tdp_w}; }, D::kPlain},
      {"purchase_usd", [](const G& g) { return Cell{g.purchase_usd}; }, D::kCount},
      {"purchase_date", [](const G& g) { return Cell{g.purchase_date}; }},
      {"cloud_usd_per_gpu_hour",
       [](const G& g) {
         return g.cloud_usd_per_gpu_hour > 0 ? Cell{g.cloud_usd_per_gpu_hour} : Cell{};
       }},
      {"cloud_date", [](const G& g) { return Cell{g.cloud_date}; }},
      source("peak_tflops_source", "peak_tflops"),
      source("matmul_ceiling_source", "matmul_ceiling"),
      source("memory_source", "memory"),
      source("links_source", "links"),
      source("power_source", "power"),
      source("price_source", "price"),
      source("cloud_price_source", "cloud"),
      {"source_path", [](const G& g) { return Cell{g.source_path}; }},
  };
  return kColumns;
}

}  // namespace gpudays
