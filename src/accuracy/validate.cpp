// Planner validation: each published case planned with its configuration pinned, compared in the
// source's own unit.
#include "accuracy/validate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "accuracy/memory_check.h"
#include "catalog/catalog.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/error_band.h"

namespace gpudays {
namespace {

// The published configuration in the planner's terms; an absent field was not published and is
// searched (the planner's fastest fitting choice), which the case's notes say.
struct Pinned {
  std::optional<bool> free_lunch;
  std::optional<bool> checkpointing;
  std::optional<Sharding> sharding;
  std::optional<int64_t> micro_batch;
  std::optional<int64_t> accumulation;
  std::optional<int64_t> global_batch;
};

struct Candidate {
  Configuration config;
  int64_t global_batch = 0;
};

// What the published run's checkpointing kept (docs/planner.md, "Selective checkpointing").
CheckpointPolicy checkpoint_policy(const Measurement& m, std::vector<std::string>& notes) {
  CheckpointPolicy policy;
  if (m.checkpointed_block_share) {
    policy.block_share = *m.checkpointed_block_share;
    notes.push_back(fmt::format("checkpointing {:.2f} of the blocks", policy.block_share));
  }
  if (m.activation_checkpointing == "selective_op") {
    policy.keep_alternate_matmuls = true;
    notes.push_back(
        "per-op checkpointing: every other matmul's output and the attention's kept, the rest "
        "recomputed");
  }
  return policy;
}

Pinned pin(const Measurement& m, std::vector<std::string>& notes) {
  Pinned p;
  if (m.fused_attention) {
    p.free_lunch = *m.fused_attention;
    if (m.precision == Precision::kFp32 && !m.tf32 && *m.fused_attention) {
      notes.push_back(
          "fused attention published without TF32: free-lunch also turns TF32 on in "
          "this fp32 plan");
    }
  } else if (m.precision == Precision::kFp32 && m.tf32) {
    p.free_lunch = true;
    notes.push_back("fused attention not published; TF32 is, so free-lunch is on");
  }
  const std::string& ac = m.activation_checkpointing;
  if (!ac.empty()) p.checkpointing = ac != "none";
  if ((ac == "selective" || ac == "selective_layer") && !m.checkpointed_block_share) {
    notes.push_back(fmt::format(
        "'{}' checkpointing planned as every block (the share of blocks is not published)", ac));
  }
  if (m.sharding == "fsdp_hybrid_shard") {
    p.sharding = Sharding::kFsdpFullShard;
    notes.push_back(
        "fsdp_hybrid_shard planned as fsdp_full_shard over all GPUs (the planner "
        "has no hybrid sharding)");
  } else if (!m.sharding.empty()) {
    p.sharding = parse_sharding(m.sharding);
  }
  if (m.compiled.value_or(false)) {
    notes.push_back("torch.compile: each pointwise chain planned as one fused kernel");
  }
  if (m.inter_node_gbit_per_s && m.nodes > 1) {
    notes.push_back(
        fmt::format("network {:g} Gb/s as published, taken per node", *m.inter_node_gbit_per_s));
  }
  if (m.links.pair_bridge) {
    notes.push_back(*m.links.pair_bridge ? "pairs NVLink-bridged, as the source says"
                                         : "no NVLink bridge, as the source says");
  }
  if (m.links.peer_to_peer) {
    notes.push_back(*m.links.peer_to_peer
                        ? "peer-to-peer on, as the source says"
                        : "no peer-to-peer (NCCL_P2P_DISABLE=1), as the source says");
  }
  if (m.inter_node_gbit_per_s_per_gpu && m.nodes > 1) {
    notes.push_back(fmt::format("network {:g} Gb/s per GPU as published, {:g} Gb/s per node",
                                *m.inter_node_gbit_per_s_per_gpu,
                                *m.inter_node_gbit_per_s_per_node()));
  }
  p.micro_batch = m.micro_batch_size;
  p.accumulation = m.gradient_accumulation;
  p.global_batch = m.global_batch_size;
  return p;
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// (micro-batch, accumulation, global batch) candidates; throws InputError when the published
// figures do not multiply out into whole numbers.
std::vector<Candidate> batch_candidates(const Pinned& p,
                                        int64_t dp,
                                        std::vector<std::string>& notes) {
  std::vector<Candidate> out;
  auto add = [&](int64_t mb, int64_t ga) {
    Candidate c;
    c.config.micro_batch_size = mb;
    c.config.grad_acc_steps = ga;
    c.global_batch = mb * ga * dp;
    out.push_back(c);
  };
  if (p.micro_batch && p.accumulation) {
    add(*p.micro_batch, *p.accumulation);
  } else if (p.micro_batch && p.global_batch) {
    const int64_t per_step = *p.micro_batch * dp;
    if (*p.global_batch % per_step != 0) {
      throw InputError(fmt::format("global batch {} is not a multiple of micro-batch {} x {} GPUs",
                                   *p.global_batch,
                                   *p.micro_batch,
                                   dp));
    }
    add(*p.micro_batch, *p.global_batch / per_step);
    notes.push_back("accumulation derived from the global batch");
  } else if (p.accumulation && p.global_batch) {
    const int64_t per_micro = *p.accumulation * dp;
    if (*p.global_batch % per_micro != 0) {
      throw InputError(fmt::format("global batch {} is not a multiple of accumulation {} x {} GPUs",
                                   *p.global_batch,
                                   *p.accumulation,
                                   dp));
    }
    add(*p.global_batch / per_micro, *p.accumulation);
    notes.push_back("micro-batch derived from the global batch");
  } else if (p.micro_batch) {
    add(*p.micro_batch, 1);
    notes.push_back("accumulation and global batch not published: accumulation 1");
  } else if (p.global_batch) {
    if (*p.global_batch % dp != 0) {
      throw InputError(
          fmt::format("global batch {} does not split over {} GPUs", *p.global_batch, dp));
    }
    const int64_t per_gpu = *p.global_batch / dp;
    for (int64_t mb : divisors(per_gpu)) add(mb, per_gpu / mb);
    notes.push_back("micro-batch not published: the planner's highest fitting throughput");
  } else {
    for (int64_t mb = 1; mb <= 1024; mb *= 2) add(mb, 1);
    notes.push_back(
        "batch not published: accumulation 1 and the micro-batch of the planner's highest "
        "fitting throughput");
  }
  return out;
}

std::vector<Candidate> candidates(const Measurement& m,
                                  const Pinned& p,
                                  std::vector<std::string>& notes) {
  const std::vector<Candidate> batches = batch_candidates(p, m.data_parallel(), notes);
  std::vector<bool> free_lunch =
      p.free_lunch ? std::vector{*p.free_lunch} : std::vector{false, true};
  std::vector<bool> ckpt =
      p.checkpointing ? std::vector{*p.checkpointing} : std::vector{false, true};
  std::vector<Sharding> shardings;
  if (p.sharding) {
    shardings = {*p.sharding};
  } else if (m.gpus() == 1) {
    shardings = {Sharding::kNone};
  } else {
    shardings = {Sharding::kNone, Sharding::kZero1, Sharding::kZero2, Sharding::kZero3};
  }
  std::vector<std::string> searched;
  if (!p.free_lunch) searched.push_back("fused attention (free-lunch)");
  if (!p.checkpointing) searched.push_back("checkpointing");
  if (!p.sharding && m.gpus() > 1) searched.push_back("sharding");
  if (!searched.empty()) {
    std::string list;
    for (const auto& s : searched) list += (list.empty() ? "" : ", ") + s;
    notes.push_back(fmt::format("not published: {}; the planner's fastest fitting choice", list));
  }
  std::vector<Candidate> out;
  for (const Candidate& b : batches) {
    for (bool fl : free_lunch) {
      for (bool ck : ckpt) {
        for (Sharding s : shardings) {
          Candidate c = b;
          c.config.methods = MethodSet{fl, ck, s, m.offloading};
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

// Fitting first, then throughput: where the batch was not published the candidates differ in
// global batch, and the shortest step (the smallest batch) is not what a measured run would use;
// at one global batch the two orders agree.
bool better(const PlanRow& a, const PlanRow& b) {
  if (a.fits != b.fits) return a.fits;
  return a.samples_per_s > b.samples_per_s;
}

// Compares the row with the case's first published throughput figure, in this order; without one,
// with its published peak memory (a memory-only case).
void compare(const Measurement& m, const PlanRow& row, ValidationCase& v) {
  const PublishedFigures& p = m.published;
  const double world = static_cast<double>(m.gpus());
  const double tokens_per_sample = row.tokens_per_s / row.samples_per_s;
  const double batch = static_cast<double>(v.global_batch);
  v.predicted_tokens_per_s_per_gpu = row.tokens_per_s / world;
  v.approximate = p.approximate;
  v.published_peak_gib = published_peak_gib(p);
  v.published_memory_measure = p.peak_memory_measure;
  // higher_is_better: throughput figures; otherwise a time at the published batch.
  auto set = [&](const char* metric,
                 double published,
                 double predicted,
                 bool higher_is_better,
                 std::optional<double> published_tokens) {
    v.metric = metric;
    v.published = published;
    v.predicted = predicted;
    v.error = higher_is_better ? predicted / published - 1.0 : published / predicted - 1.0;
    v.published_tokens_per_s_per_gpu = published_tokens;
  };
  const bool has_step = p.step_time_s.has_value() || p.step_time_ms.has_value();
  const double step_s = p.step_time_s ? *p.step_time_s : p.step_time_ms.value_or(0.0) / 1e3;
  if (p.tokens_per_s_per_gpu) {
    set("tokens_per_s_per_gpu",
        *p.tokens_per_s_per_gpu,
        row.tokens_per_s / world,
        true,
        *p.tokens_per_s_per_gpu);
  } else if (p.tokens_per_s) {
    set("tokens_per_s", *p.tokens_per_s, row.tokens_per_s, true, *p.tokens_per_s / world);
  } else if (p.samples_per_s) {
    set("samples_per_s",
        *p.samples_per_s,
        row.samples_per_s,
        true,
        *p.samples_per_s * tokens_per_sample / world);
  } else if (has_step) {
    const double published_tokens = batch * tokens_per_sample / step_s / world;
    if (p.step_time_s) {
      set("step_time_s", *p.step_time_s, row.step_time_s, false, published_tokens);
    } else {
      set("step_time_ms", *p.step_time_ms, row.step_time_s * 1e3, false, published_tokens);
    }
  } else if (p.layer_time_ms) {
    set("layer_time_ms", *p.layer_time_ms, row.layer_time_s * 1e3, false, std::nullopt);
    v.notes.push_back(
        "one layer's forward and backward: the planner's kernel times for one repeated block, "
        "without the host's launches, the optimizer, embeddings or loss");
  } else if (p.train_time_days && m.train_steps) {
    const double steps = static_cast<double>(*m.train_steps);
    set("train_time_days",
        *p.train_time_days,
        row.step_time_s * steps / kSecondsPerDay,
        false,
        steps * batch * tokens_per_sample / (*p.train_time_days * kSecondsPerDay * world));
  } else if (p.tflops_per_gpu && p.flops_per_token) {
    // The source's own count: its TFLOP/s are tokens times its FLOPs per token, so the planner's
    // tokens are counted the same way.
    set("tflops_per_gpu",
        *p.tflops_per_gpu,
        row.tokens_per_s / world * *p.flops_per_token / 1e12,
        true,
        *p.tflops_per_gpu * 1e12 / *p.flops_per_token);
    v.notes.push_back(fmt::format(
        "TFLOP/s by the source's own count, {:.4g} FLOPs per token: the planner's tokens counted "
        "the same way",
        *p.flops_per_token));
  } else if (p.tflops_per_gpu) {
    set("tflops_per_gpu",
        *p.tflops_per_gpu,
        row.model_flops_per_sample * row.samples_per_s / world / 1e12,
        true,
        std::nullopt);
    v.notes.push_back(
        "model TFLOP/s by the planner's count (6N + 12·L·d·T per token, as PaLM); "
        "the source's own count may differ slightly");
  } else if (p.mfu) {
    set("mfu", *p.mfu, row.mfu, true, std::nullopt);
  } else if (p.mfu_percent) {
    set("mfu_percent", *p.mfu_percent, 100.0 * row.mfu, true, std::nullopt);
  } else if (v.published_peak_gib) {
    // Memory only: the peak per GPU, as the memory check compares it (predicted / published - 1).
    v.memory_only = true;
    set("peak_memory_gib",
        *v.published_peak_gib,
        compared_bytes(row.memory, v.published_memory_measure) / kGiB,
        true,
        std::nullopt);
    v.notes.push_back("memory only: no throughput published, so in no time statistic");
  } else {
    throw InputError("no comparable throughput figure or peak memory");
  }
}

// The stack a case ran: its model code, the engine's where the file names none.
std::string case_stack(const Measurement& m) {
  return m.implementation.empty() ? to_string(ModelCode::kEngine) : m.implementation;
}

// How the planner plans a case as it ran: its network, links, model code, optimizer, precision
// layout, input pipeline and CUDA context.
PlanOptions case_options(const Measurement& m,
                         const PlanOptions& options,
                         std::vector<std::string>& notes) {
  PlanOptions opts = options;
  if (const auto network = m.inter_node_gbit_per_s_per_node()) {
    opts.time.inter_node_gb_per_s = *network / 8.0;
  }
  opts.time.links = m.links;
  opts.implementation.code = parse_model_code(case_stack(m));
  opts.implementation.compiled = m.compiled.value_or(false);
  if (!m.attention_kernel.empty()) {
    opts.implementation.attention_kernel = parse_attention_kernel(m.attention_kernel);
  }
  opts.implementation.mlm_predictions = m.arch_extras.mlm_max_predictions;
  opts.implementation.tf32 = m.tf32;  // the loader allows it for fp32 recipes only
  opts.implementation.checkpointing = checkpoint_policy(m, notes);
  opts.time.autocast_fp32_weights_at_stage_1 = m.autocast_fp32_weights;
  opts.time.optimizer =
      m.optimizer == "sgd" ? OptimizerUpdate::kSgdNesterov : OptimizerUpdate::kAdam;
  opts.time.fp16_loss_scaling = m.loss_scaling;
  opts.time.fused_optimizer = m.fused_optimizer;
  opts.time.fp16_optimizer =
      parse_fp16_optimizer(m.fp16_optimizer.empty() ? "torch" : m.fp16_optimizer).value();
  opts.implementation.half_precision_model = m.half_precision_model;
  opts.implementation.attention_score_kernels = m.attention_score_kernels.value_or(1);
  opts.implementation.strided_heads = m.strided_heads;
  opts.implementation.fp32_residual_stream = m.fp32_residual_stream;
  opts.implementation.channels_last = m.channels_last;
  opts.implementation.linear_bias_add = m.linear_bias_add;
  opts.implementation.returns_key_values = m.returns_key_values;
  opts.implementation.holds_output = m.holds_output;
  opts.time.half_precision_model = m.half_precision_model;
  opts.time.checkpoint_inputs_on_host = m.cpu_checkpointing;
  opts.memory.checkpoint_inputs_on_host = m.cpu_checkpointing;
  opts.memory.half_precision_model = m.half_precision_model;
  opts.memory.autocast_fp32_weights_at_stage_1 = m.autocast_fp32_weights;
  opts.memory.stack_frees_gradients = m.gradients_freed;
  // torch FSDP keeps its parameter and gradient shards in fp32 (plan/memory_model.h).
  opts.memory.fp32_sharded_state = m.sharding.rfind("fsdp", 0) == 0;
  opts.memory.root_unit_gradients_whole = opts.memory.fp32_sharded_state;
  // A case that names no input ran on synthetic or preloaded data (docs/catalog.md).
  opts.input.image_input =
      m.image_input.empty() ? ImageInput::kSynthetic : parse_image_input(m.image_input);
  if (m.cpu_cores_per_gpu) opts.input.cpu_cores_per_gpu = *m.cpu_cores_per_gpu;
  if (m.host_memory_gib) opts.host_memory_bytes_per_node = *m.host_memory_gib * kGiB;
  if (m.cuda_context_mib) opts.memory.cuda_context_bytes = *m.cuda_context_mib * 1024.0 * 1024.0;
  return opts;
}

// The catalog GPU with the measured variant's memory, bandwidth and power limit, where the case
// gives them.
GpuSpec case_gpu(const Measurement& m, const Catalog& catalog) {
  GpuSpec gpu = catalog.gpu(m.gpu);
  if (m.gpu_memory_gib)
    gpu.memory_bytes = std::llround(*m.gpu_memory_gib * 1024.0 * 1024.0 * 1024.0);
  if (m.gpu_memory_bandwidth_gb_per_s)
    gpu.memory_bandwidth_gb_per_s = *m.gpu_memory_bandwidth_gb_per_s;
  if (m.gpu_power_limit_w) gpu.power_limit_w = *m.gpu_power_limit_w;
  return gpu;
}

// The case's model as planned: its precision, the candidate's global batch and its steps.
ModelSpec case_model(const Measurement& m, int64_t global_batch) {
  ModelSpec model = m.model;
  model.recipe.precision = m.precision;
  model.recipe.global_batch = global_batch;
  if (m.train_steps) model.recipe.train_steps = *m.train_steps;
  return model;
}

ValidationCase validate_case(const Measurement& m,
                             const Catalog& catalog,
                             const PlanOptions& options,
                             const ValidationOptions& validation) {
  ValidationCase v;
  v.source_id = m.source_id;
  v.name = m.name;
  v.citation = m.citation;
  v.model = m.model_name;
  v.gpu = m.gpu;
  v.split = m.split;
  v.trusted = m.trusted;
  v.nodes = m.nodes;
  v.gpus_per_node = m.gpus_per_node;
  auto skip = [&v](std::string reason) {
    v.skipped = true;
    v.skip_reason = std::move(reason);
    return v;
  };
  if (!m.representable()) {
    std::vector<std::string> why;
    const auto& x = m.arch_extras;
    if (x.mlm_max_predictions > 0) {
      why.push_back(fmt::format("MLM head on at most {} masked positions", x.mlm_max_predictions));
    }
    if (m.tensor_parallel > 1) why.push_back(fmt::format("tensor parallel {}", m.tensor_parallel));
    if (m.pipeline_parallel > 1) {
      why.push_back(fmt::format("pipeline parallel {}", m.pipeline_parallel));
    }
    std::string list;
    for (const auto& w : why) list += (list.empty() ? "" : ", ") + w;
    return skip("not representable: " + list);
  }
  if (!m.trusted && !validation.include_untrusted) {
    if (!m.untrusted_reason.empty()) return skip("untrusted case: " + m.untrusted_reason);
    return skip("untrusted source (trusted = false): kept for comparison only");
  }
  const GpuSpec gpu = case_gpu(m, catalog);
  const Cluster cluster{{m.nodes, m.gpus_per_node}, &gpu};
  // Inline models' counts leave out ArchExtras (a gated MLP's third matrix): a scale, no more.
  v.point = {m.gpu,
             gpu.architecture,
             to_string(m.model.family),
             m.gpus(),
             static_cast<double>(count_params(m.model).total),
             case_stack(m)};
  try {
    const PlanOptions opts = case_options(m, options, v.notes);
    const Pinned pinned = pin(m, v.notes);
    std::optional<PlanRow> best;
    int64_t best_batch = 0;
    for (const Candidate& c : candidates(m, pinned, v.notes)) {
      PlanRow row = plan_configuration(case_model(m, c.global_batch), cluster, c.config, opts);
      if (!best || better(row, *best)) {
        best = std::move(row);
        best_batch = c.global_batch;
      }
    }
    v.config = best->config;
    v.global_batch = best_batch;
    v.row = best;
    if (validation.op_breakdown) {
      v.ops = op_breakdown(case_model(m, best_batch),
                           gpu,
                           best->config.micro_batch_size,
                           best->config.methods.free_lunch,
                           opts);
    }
    if (best->input_bound) {
      v.notes.push_back(
          fmt::format("input-bound: the host's loader ({}, {} cores per GPU) delivers "
                      "{:.0f} images/s per GPU",
                      to_string(opts.input.image_input),
                      opts.input.cpu_cores_per_gpu,
                      best->input.images_per_s));
    }
    if (!best->fits)
      v.notes.push_back("the planner's memory model says it does not fit: " + best->reason);
    compare(m, *best, v);
  } catch (const InputError& e) {
    v.row.reset();
    return skip(fmt::format("cannot be planned: {}", e.what()));
  }
  return v;
}

}  // namespace

ErrorSummary summarize_errors(const std::string& group, const std::vector<double>& errors) {
  ErrorSummary s;
  s.group = group;
  s.cases = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  double abs_sum = 0.0;
  double sum = 0.0;
  for (double e : errors) {
    abs_sum += std::abs(e);
    sum += e;
    s.max_abs_error = std::max(s.max_abs_error, std::abs(e));
  }
  s.mape = abs_sum / static_cast<double>(errors.size());
  s.mean_error = sum / static_cast<double>(errors.size());
  s.low_error = quantile(errors, kBandLowQuantile);
  s.high_error = quantile(errors, kBandHighQuantile);
  return s;
}

std::vector<Measurement> select_measurements(const std::vector<MeasurementFile>& files,
                                             const ValidationFilter& filter) {
  std::vector<Measurement> out;
  for (const MeasurementFile& f : files) {
    for (const Measurement& m : f.cases) {
      if (filter.split && m.split != *filter.split) continue;
      if (!filter.gpu.empty() && m.gpu != filter.gpu) continue;
      if (!filter.case_name.empty() && m.name != filter.case_name &&
          m.source_id + "/" + m.name != filter.case_name) {
        continue;
      }
      out.push_back(m);
    }
  }
  return out;
}

std::optional<bool> group_target_met(const ErrorSummary& s) {
  if (s.cases < kGroupTargetMinCases) return std::nullopt;
  return s.mape <= kGroupMapeTarget;
}

ValidationReport validate(const std::vector<Measurement>& measurements,
                          const Catalog& catalog,
                          const PlanOptions& options,
                          const ValidationOptions& validation) {
  ValidationReport report;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_gpu;
  std::map<MeasurementSplit, std::vector<double>> by_split;
  std::map<std::string, std::vector<double>> check_by_architecture, check_by_family;
  for (const Measurement& m : measurements) {
    ValidationCase v = validate_case(m, catalog, options, validation);
    if (v.timed() && v.trusted) {
      all.push_back(v.error);
      by_gpu[v.gpu].push_back(v.error);
      by_split[v.split].push_back(v.error);
      if (v.split == MeasurementSplit::kCheck) {
        check_by_architecture[v.point.architecture].push_back(v.error);
        check_by_family[v.point.family].push_back(v.error);
      }
      report.worst.push_back(report.cases.size());
    }
    report.cases.push_back(std::move(v));
  }
  report.overall = summarize_errors("all", all);
  for (const auto& [gpu, errors] : by_gpu) report.by_gpu.push_back(summarize_errors(gpu, errors));
  for (MeasurementSplit s : {MeasurementSplit::kFit, MeasurementSplit::kCheck}) {
    if (by_split.count(s)) report.by_split.push_back(summarize_errors(to_string(s), by_split[s]));
  }
  for (const auto& [architecture, errors] : check_by_architecture)
    report.check_by_group.push_back(summarize_errors("gpu " + architecture, errors));
  for (const auto& [family, errors] : check_by_family)
    report.check_by_group.push_back(summarize_errors("family " + family, errors));
  std::stable_sort(report.worst.begin(), report.worst.end(), [&](size_t a, size_t b) {
    return std::abs(report.cases[a].error) > std::abs(report.cases[b].error);
  });
  if (report.worst.size() > validation.worst) report.worst.resize(validation.worst);
  report.selected_gpu = validation.selected_gpu;
  report.selected_case = validation.selected_case;
  report.coverage = range_coverage(report.cases);
  report.memory = check_memory(report);
  return report;
}

namespace {

void count(std::map<std::string, RangeCoverage>& groups, const std::string& group, bool inside) {
  RangeCoverage& c = groups[group];
  c.group = group;
  ++c.cases;
  c.inside += inside ? 1 : 0;
}

std::vector<RangeCoverage> values(const std::map<std::string, RangeCoverage>& groups) {
  std::vector<RangeCoverage> out;
  for (const auto& [name, c] : groups) out.push_back(c);
  return out;
}

}  // namespace

std::optional<CoverageReport> range_coverage(const std::vector<ValidationCase>& cases) {
  std::vector<BandResidual> fit;
  for (const ValidationCase& v : cases) {
    if (v.timed() && v.trusted && v.split == MeasurementSplit::kFit)
      fit.push_back({v.point, v.error, v.source_id});
  }
  if (fit.empty()) return std::nullopt;
  const ErrorBands bands(std::move(fit));
  CoverageReport report;
  report.overall.group = "all";
  std::map<std::string, RangeCoverage> by_architecture;
  std::map<std::string, RangeCoverage> by_family;
  for (size_t i = 0; i < cases.size(); ++i) {
    const ValidationCase& v = cases[i];
    if (!v.timed() || !v.trusted || v.split != MeasurementSplit::kCheck) continue;
    const bool inside = bands.for_point(v.point).contains_error(v.error);
    ++report.overall.cases;
    report.overall.inside += inside ? 1 : 0;
    count(by_architecture, v.point.architecture, inside);
    count(by_family, v.point.family, inside);
    if (!inside) report.outside.push_back(i);
  }
  if (report.overall.cases == 0) return std::nullopt;
  report.by_architecture = values(by_architecture);
  report.by_family = values(by_family);
  return report;
}

}  // namespace gpudays
