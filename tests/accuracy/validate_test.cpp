// Planner validation against published measurements: every case of the shipped set plans or says
// why not, the published configuration is what gets planned, the error arithmetic, and pinned
// plans (one configuration) agree with the full search's row for that configuration.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "accuracy/calibration_fit.h"
#include "accuracy/error_bands.h"
#include "accuracy/validate.h"
#include "catalog/param_count.h"
#include "common/error.h"
#include "plan/device_model.h"
#include "plan/workload.h"
#include "rows/validation_rows.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

const ValidationReport& shipped_report() {
  static const ValidationReport report =
      validate(select_measurements(load_measurements(catalog()), {}), catalog(), PlanOptions{}, {});
  return report;
}

const ValidationCase& find_case(const std::string& source, const std::string& name) {
  for (const ValidationCase& v : shipped_report().cases) {
    if (v.source_id == source && v.name == name) return v;
  }
  throw std::runtime_error("no case " + source + "/" + name);
}

TEST(Validate, ErrorSummaryArithmetic) {
  const ErrorSummary s = summarize_errors("x", {0.1, -0.3, 0.2});
  EXPECT_EQ(s.cases, 3);
  EXPECT_NEAR(s.mape, 0.2, 1e-12);
  EXPECT_NEAR(s.mean_error, 0.0, 1e-12);
  EXPECT_NEAR(s.max_abs_error, 0.3, 1e-12);
  EXPECT_NEAR(s.low_error, -0.22, 1e-12);  // 10th percentile, interpolated
  EXPECT_NEAR(s.high_error, 0.18, 1e-12);
  EXPECT_EQ(summarize_errors("empty", {}).cases, 0);
}

// Every trusted representable case is planned; every other case is skipped with its reason.
TEST(Validate, EveryShippedCasePlansOrSaysWhy) {
  const ValidationReport& report = shipped_report();
  int evaluated = 0;
  int memory_only = 0;
  for (const ValidationCase& v : report.cases) {
    if (v.skipped) {
      EXPECT_FALSE(v.skip_reason.empty()) << v.name;
      EXPECT_TRUE(v.skip_reason.rfind("not representable", 0) == 0 ||
                  v.skip_reason.rfind("untrusted", 0) == 0)
          << v.name << ": " << v.skip_reason;
      continue;
    }
    ASSERT_TRUE(v.row.has_value()) << v.name;
    EXPECT_TRUE(std::isfinite(v.error)) << v.name;
    EXPECT_GT(v.predicted, 0.0) << v.name;
    EXPECT_LE(v.row->executed_utilisation, 1.0) << v.name;
    // Memory-only cases (a published peak, no throughput) are in no time statistic.
    if (v.memory_only) {
      EXPECT_EQ(v.metric, "peak_memory_gib") << v.name;
      ++memory_only;
      continue;
    }
    ++evaluated;
  }
  EXPECT_GE(evaluated, 30);
  EXPECT_GE(memory_only, 6);  // the Mamba paper's table
  EXPECT_EQ(report.overall.cases, evaluated);
  int in_splits = 0;
  for (const ErrorSummary& s : report.by_split) in_splits += s.cases;
  EXPECT_EQ(in_splits, evaluated);
  ASSERT_FALSE(report.worst.empty());
  EXPECT_NEAR(
      std::abs(report.cases[report.worst.front()].error), report.overall.max_abs_error, 1e-12);
}

// A case's stack, for its error band, is the model code it names, or the engine's where it names
// none.
// A per-layer benchmark is compared with one repeated block's kernels, forward and backward:
// each of the layer's operations timed by the device model and summed, without the host's
// launches, the other layers, the optimizer, embeddings or loss.
TEST(Validate, LayerTimeCaseComparesOneLayersKernels) {
  const ValidationCase& v = find_case("substation-readme", "bert-large-layer-b8-s512");
  ASSERT_FALSE(v.skipped) << v.skip_reason;
  ASSERT_TRUE(v.row.has_value());
  EXPECT_EQ(v.metric, "layer_time_ms");
  EXPECT_TRUE(v.timed());
  EXPECT_DOUBLE_EQ(v.published, 9.14);
  EXPECT_NEAR(v.error, v.published / v.predicted - 1.0, 1e-12);
  const Measurement* m = nullptr;
  static const std::vector<MeasurementFile> files = load_measurements(catalog());
  for (const MeasurementFile& f : files)
    for (const Measurement& c : f.cases)
      if (c.source_id == "substation-readme" && c.name == v.name) m = &c;
  ASSERT_NE(m, nullptr);
  Implementation half;
  half.half_precision_model = true;
  half.linear_bias_add = m->linear_bias_add;  // the case's PyTorch of 2020
  const Workload w = build_workload(m->model, {8, 2.0, false, false, half, DeviceKind::kGpu});
  const DeviceModel device(catalog().gpu("v100-16gb"), Precision::kFp16, false, {});
  double layer_s = 0.0;
  for (const Op& op : w.blocks.at(0).ops) {
    layer_s += device.op_time_s(op, false) + device.op_time_s(op, true);
  }
  EXPECT_NEAR(v.predicted, layer_s * 1e3, 1e-9);
  // The case's one-layer model: its step also runs the embeddings, the head and the optimizer.
  EXPECT_EQ(m->model.arch.n_layers, 1);
  EXPECT_LT(v.row->layer_time_s, v.row->step_time_s);
}

// TFLOP/s published with the source's own FLOPs per token (dlrover's hardware count, with
// recomputation and non-causal attention) are compared as tokens: the prediction is the planner's
// tokens per GPU times that count, not the planner's own model FLOPs.
TEST(Validate, TflopsByTheSourcesCountAreComparedAsTokens) {
  const ValidationCase& v = find_case("dlrover-atorch-llama2", "llama2-7b-fsdp-8xa100");
  ASSERT_FALSE(v.skipped) << v.skip_reason;
  ASSERT_TRUE(v.row.has_value());
  EXPECT_EQ(v.metric, "tflops_per_gpu");
  const double flops_per_token = 61184409600.0;
  EXPECT_NEAR(v.predicted, v.row->tokens_per_s / 8 * flops_per_token / 1e12, 1e-9);
  EXPECT_NEAR(*v.published_tokens_per_s_per_gpu, 204.67e12 / flops_per_token, 1e-6);
  // The planner's own count (6N + attention, causal) is about a quarter lower: compared with it,
  // the same plan would read some 30% slow.
  const double own_tflops = v.row->model_flops_per_sample * v.row->samples_per_s / 8 / 1e12;
  EXPECT_LT(own_tflops, 0.8 * v.predicted);
}

// dlrover's loop holds transformers' output (holds_output, returns_key_values reach the plan):
// its peaks are planned at or above what ran, within 10%; without those keys they were 11-23%
// short (docs/planner.md, "Llama-2-7B under FSDP").
TEST(Validate, AHeldOutputIsInTheDlroverPeaks) {
  int checked = 0;
  for (const MemoryComparison& c : shipped_report().memory.comparisons) {
    const ValidationCase& v = shipped_report().cases[c.case_index];
    if (v.source_id != "dlrover-atorch-llama2") continue;
    EXPECT_GE(c.predicted_gib, c.published_gib) << v.name;
    EXPECT_LE(c.predicted_gib, 1.1 * c.published_gib) << v.name;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// A case's GPUs under their power limit and its attention kernel are planned as it ran:
// torchtitan's 500 W H100s with SDPA's FlashAttention-2 are slower than the same case at the
// TDP, or with cuDNN's kernels.
TEST(Validate, ACasesPowerLimitAndAttentionKernelArePlanned) {
  const std::vector<MeasurementFile> files = load_measurements(catalog());
  const Measurement* found = nullptr;
  for (const MeasurementFile& f : files)
    for (const Measurement& c : f.cases)
      if (c.source_id == "torchtitan-performance" && c.name == "h100-llama3.1-8b-8gpu-fsdp")
        found = &c;
  ASSERT_NE(found, nullptr);
  const Measurement& capped = *found;
  ASSERT_EQ(capped.gpu_power_limit_w, 500.0);
  ASSERT_EQ(capped.attention_kernel, "flash_attention_2");
  const auto predicted = [](const Measurement& c) {
    const ValidationCase v = validate({c}, catalog(), PlanOptions{}, {}).cases.at(0);
    EXPECT_FALSE(v.skipped) << v.skip_reason;
    EXPECT_EQ(v.metric, "tokens_per_s_per_gpu");
    return v.predicted;
  };
  Measurement at_tdp = capped;
  at_tdp.gpu_power_limit_w.reset();
  Measurement cudnn = capped;
  cudnn.attention_kernel = "cudnn";
  const double tokens_capped = predicted(capped);
  EXPECT_LT(tokens_capped, predicted(at_tdp));
  EXPECT_GT(tokens_capped / predicted(at_tdp), std::cbrt(500.0 / 700.0) - 1e-9);
  EXPECT_LT(tokens_capped, predicted(cudnn));
}

// The targets hold the checking half by GPU generation and by family: each group's summary is
// that of its trusted, timed checking-half cases, and a group is held to its target only with
// enough cases; the table and the JSON say which groups meet it.
TEST(Validate, CheckingHalfIsSummarisedByGenerationAndFamily) {
  const ValidationReport& report = shipped_report();
  ASSERT_FALSE(report.check_by_group.empty());
  bool volta = false, roberta = false;
  for (const ErrorSummary& s : report.check_by_group) {
    std::vector<double> errors;
    for (const ValidationCase& v : report.cases) {
      if (!v.timed() || !v.trusted || v.split != MeasurementSplit::kCheck) continue;
      if (s.group == "gpu " + v.point.architecture || s.group == "family " + v.point.family)
        errors.push_back(v.error);
    }
    const ErrorSummary expected = summarize_errors(s.group, errors);
    EXPECT_EQ(s.cases, expected.cases) << s.group;
    EXPECT_NEAR(s.mape, expected.mape, 1e-12) << s.group;
    volta |= s.group == "gpu volta";
    roberta |= s.group == "family roberta";
  }
  EXPECT_TRUE(volta);
  EXPECT_TRUE(roberta);
  ErrorSummary few{"gpu x", 2, 0.01};
  EXPECT_FALSE(group_target_met(few).has_value());
  ErrorSummary over{"gpu x", 3, 0.151};
  EXPECT_EQ(group_target_met(over), false);
  ErrorSummary under{"gpu x", 3, 0.15};
  EXPECT_EQ(group_target_met(under), true);
  std::ostringstream table, json;
  print_table(table, report);
  EXPECT_NE(table.str().find("Targets, checking half: MAPE at most 8%"), std::string::npos);
  print_json(json, report, "");
  const nlohmann::json targets = nlohmann::json::parse(json.str())["targets"];
  EXPECT_DOUBLE_EQ(targets["group_mape"].get<double>(), 0.15);
  ASSERT_EQ(targets["check_by_group"].size(), report.check_by_group.size());
  for (const nlohmann::json& g : targets["check_by_group"]) {
    if (g["cases"].get<int>() < 3)
      EXPECT_TRUE(g["target_met"].is_null()) << g["group"];
    else
      EXPECT_EQ(g["target_met"].get<bool>(), g["mape"].get<double>() <= 0.15) << g["group"];
  }
}

TEST(Validate, ACaseThatNamesNoCodeIsTheEnginesStack) {
  EXPECT_EQ(find_case("nvidia-bert-pytorch", "a100-1gpu-seq128-fp16").point.stack, "engine");
  EXPECT_EQ(find_case("flashattention-training-readme", "gpt3-355m").point.stack, "flash_attn");
}

// What ran fits: the memory model never refuses a trusted published configuration (the
// FlashAttention README's GPT-3 355M at micro-batch 32 on 80 GB A100s used to need 101 GiB).
TEST(Validate, EveryPublishedConfigurationIsPredictedToFit) {
  int checked = 0;
  for (const ValidationCase& v : shipped_report().cases) {
    if (v.skipped || !v.trusted) continue;
    ASSERT_TRUE(v.row.has_value()) << v.name;
    EXPECT_TRUE(v.row->fits) << v.source_id << "/" << v.name << ": " << v.row->reason;
    ++checked;
  }
  EXPECT_GE(checked, 60);
  const ValidationCase& gpt3 = find_case("flashattention-training-readme", "gpt3-355m");
  EXPECT_EQ(gpt3.config.micro_batch_size, 32);
  // It fits with the allocator at the card's limit: the usual slack would not.
  EXPECT_LE(gpt3.row->peak_memory_bytes(), 80.0 * (1 << 30));
  EXPECT_TRUE(gpt3.row->memory.allocator_at_limit);
}

// Every published peak is compared with the part of the planner's total that its measure counts,
// in GiB: the sources' "GB" read as 10^9 bytes; torchtitan's reserved peaks leave out the CUDA
// context and NCCL buffers.
TEST(Validate, PublishedPeakMemoryIsCompared) {
  PublishedFigures gb;
  gb.peak_memory_gb = 73.0;
  EXPECT_NEAR(*published_peak_gib(gb), 73e9 / (1 << 30), 1e-9);
  EXPECT_FALSE(published_peak_gib(PublishedFigures{}).has_value());
  const MemoryCheckReport& m = shipped_report().memory;
  ASSERT_GE(m.comparisons.size(), 10u);
  double abs_sum = 0.0;
  for (const MemoryComparison& c : m.comparisons) {
    const ValidationCase& v = shipped_report().cases[c.case_index];
    ASSERT_TRUE(v.row.has_value()) << v.name;
    const double total_gib = v.row->peak_memory_bytes() / (1 << 30);
    if (c.measure == "process") {
      EXPECT_NEAR(c.predicted_gib, total_gib, 1e-9) << v.name;
    } else {
      EXPECT_LT(c.predicted_gib, total_gib) << v.name;
    }
    EXPECT_NEAR(c.error, c.predicted_gib / c.published_gib - 1.0, 1e-12) << v.name;
    abs_sum += std::abs(c.error);
  }
  EXPECT_NEAR(m.mape, abs_sum / static_cast<double>(m.comparisons.size()), 1e-12);
  const ValidationCase& titan = find_case("torchtitan-performance", "h100-llama3.1-8b-8gpu-fsdp");
  bool titan_compared = false;
  for (const MemoryComparison& c : m.comparisons) {
    if (&shipped_report().cases[c.case_index] == &titan) {
      titan_compared = true;
      EXPECT_DOUBLE_EQ(c.published_gib, 82.4);
      EXPECT_EQ(c.measure, "reserved");
      EXPECT_NEAR(c.predicted_gib * (1 << 30),
                  titan.row->peak_memory_bytes() - titan.row->memory.framework_bytes,
                  1.0);
    }
  }
  EXPECT_TRUE(titan_compared);
}

// A planned peak cut to what each kind of published figure counts.
TEST(Validate, EachPeakMemoryMeasureCountsItsOwnParts) {
  MemoryBreakdown m;
  m.weights_bytes = 10.0;
  m.activations_bytes = 20.0;
  m.framework_bytes = 3.0;
  m.fragmentation_bytes = 1.5;
  EXPECT_DOUBLE_EQ(compared_bytes(m, "process"), 34.5);
  EXPECT_DOUBLE_EQ(compared_bytes(m, "reserved"), 31.5);
  EXPECT_DOUBLE_EQ(compared_bytes(m, "allocated"), 30.0);
  // The ends of the range move the slack alone.
  m.fragmentation_floor_bytes = 0.5;
  m.fragmentation_high_bytes = 4.0;
  EXPECT_DOUBLE_EQ(compared_bytes(m, "process", SlackEnd::kLeast), 33.5);
  EXPECT_DOUBLE_EQ(compared_bytes(m, "reserved", SlackEnd::kMost), 34.0);
  EXPECT_DOUBLE_EQ(compared_bytes(m, "allocated", SlackEnd::kMost), 30.0);
}

// Each published peak that counts the allocator's slack has a planned range around the
// prediction, and the report counts the peaks inside theirs (the shipped set: most of them). An
// allocated peak (dlrover's) holds no slack and has none.
TEST(Validate, PublishedPeaksAreCheckedAgainstThePlannedRange) {
  const MemoryCheckReport& m = shipped_report().memory;
  int with_range = 0;
  int inside = 0;
  int allocated_peaks = 0;
  for (const MemoryComparison& c : m.comparisons) {
    const ValidationCase& v = shipped_report().cases[c.case_index];
    if (c.measure == "allocated") {
      EXPECT_FALSE(c.predicted_low_gib || c.predicted_high_gib) << v.name;
      ++allocated_peaks;
      continue;
    }
    ASSERT_TRUE(c.predicted_low_gib && c.predicted_high_gib) << v.name;
    EXPECT_LT(*c.predicted_low_gib, c.predicted_gib) << v.name;
    EXPECT_GE(*c.predicted_high_gib, c.predicted_gib) << v.name;
    EXPECT_NEAR(*c.predicted_low_gib,
                compared_bytes(v.row->memory, c.measure, SlackEnd::kLeast) / (1 << 30),
                1e-9);
    ++with_range;
    const bool in =
        c.published_gib >= *c.predicted_low_gib && c.published_gib <= *c.predicted_high_gib;
    EXPECT_EQ(c.inside_range(), in) << v.name;
    inside += in ? 1 : 0;
  }
  EXPECT_EQ(m.with_range, with_range);
  EXPECT_EQ(m.inside_range, inside);
  EXPECT_GE(2 * inside, with_range) << "at most half the published peaks outside their range";
  EXPECT_GT(allocated_peaks, 0);
  // An allocated figure holds no slack: no range.
  MemoryComparison allocated;
  allocated.published_gib = 1.0;
  EXPECT_FALSE(allocated.inside_range());
}

// ZeRO stage 1 over an autocast model (Lightning's DDPStrategyZero1 in Lambda's runs) keeps fp32
// weights and gradients whole; only Adam's two moments are sharded.
TEST(Validate, AutocastStageOneKeepsFp32WeightsAndGradientsWhole) {
  const ValidationCase& v = find_case("lambda-flashattention2", "gpt3-2.7b-a100-8gpu-fa2");
  ASSERT_TRUE(v.row.has_value());
  ASSERT_EQ(v.config.methods.sharding, Sharding::kZero1);
  const MemoryBreakdown& m = v.row->memory;
  // fp32 weights (4 bytes) and autocast's bf16 copies of them (2), fp32 gradients (4).
  EXPECT_DOUBLE_EQ(m.weights_bytes, 1.5 * m.gradients_bytes);
  EXPECT_NEAR(m.optimizer_bytes, m.gradients_bytes * 2.0 / 8.0, 1.0);  // 8 bytes / 8 GPUs vs 4
}

// The published configuration is what is planned: llm.c's GPT-2 774M on 8 A100s runs micro-batch
// 32 with ZeRO stage 1 and a global batch of 512 sequences (accumulation 2).
TEST(Validate, PublishedConfigurationIsPinned) {
  const ValidationCase& v = find_case("llm-c-scripts", "gpt2-774m");
  ASSERT_FALSE(v.skipped) << v.skip_reason;
  EXPECT_EQ(v.config.micro_batch_size, 32);
  EXPECT_EQ(v.config.grad_acc_steps, 2);
  EXPECT_EQ(v.config.methods.sharding, Sharding::kZero1);
  EXPECT_EQ(v.global_batch, 512);
  EXPECT_EQ(v.metric, "step_time_s");
  // A time: the error is published / predicted - 1, the throughput ratio at the same batch.
  EXPECT_NEAR(v.error, v.published / v.predicted - 1.0, 1e-12);
}

// DeepSpeed's ZeRO-Offload run is planned offloaded: the optimizer state on the host (16 bytes per
// parameter in its pinned memory, checked against the host the source shows), none of it on the
// GPU, and the CPU optimizer in the step; without the host's memory the default host is too small.
TEST(Validate, OffloadedCaseKeepsItsOptimizerOnTheHost) {
  const ValidationCase& v = find_case("deepspeed-tutorials", "gpt2-10b-v100-offload");
  ASSERT_FALSE(v.skipped) << v.skip_reason;
  ASSERT_TRUE(v.row.has_value());
  EXPECT_TRUE(v.config.methods.offloading);
  EXPECT_EQ(v.config.methods.sharding, Sharding::kZero2);
  EXPECT_EQ(v.row->memory.optimizer_bytes, 0.0);
  EXPECT_EQ(v.row->memory.gradients_bytes, 0.0);
  EXPECT_GT(v.row->memory.host_bytes, 15.0 * 10e9);  // 16 bytes x about 10.3B parameters
  EXPECT_GT(v.row->time.offload_s, 0.0);
  EXPECT_EQ(v.row->time.optimizer_s, 0.0);
  EXPECT_TRUE(v.row->fits) << v.row->reason;

  std::vector<Measurement> cases;
  for (const MeasurementFile& f : load_measurements(catalog())) {
    for (const Measurement& m : f.cases)
      if (m.name == v.name) cases.push_back(m);
  }
  ASSERT_EQ(cases.size(), 1U);
  cases[0].host_memory_gib.reset();
  const ValidationReport report = validate(cases, catalog(), PlanOptions{}, {});
  ASSERT_TRUE(report.cases.at(0).row.has_value());
  EXPECT_FALSE(report.cases[0].row->fits);
  EXPECT_NE(report.cases[0].row->reason.find("host memory"), std::string::npos)
      << report.cases[0].row->reason;
}

// timm's benchmark fed synthetic tensors; the same run reading JPEGs with DeiT's augmentation on
// two host cores per GPU is bound by its loader, slower by exactly that bound, and says so.
TEST(Validate, ImageInputOfACaseBindsItsStep) {
  std::vector<Measurement> cases;
  for (const MeasurementFile& f : load_measurements(catalog())) {
    for (const Measurement& m : f.cases)
      if (m.source_id == "timm-benchmark-rtx3090" && m.name == "vit-small-patch16-224")
        cases.push_back(m);
  }
  ASSERT_EQ(cases.size(), 1U);
  EXPECT_EQ(cases[0].image_input, "synthetic");
  cases.push_back(cases[0]);
  cases[1].name = "loaded";
  cases[1].image_input = "jpeg-deit";
  cases[1].cpu_cores_per_gpu = 2;
  const ValidationReport report = validate(cases, catalog(), PlanOptions{}, {});
  const ValidationCase& synthetic = report.cases[0];
  ASSERT_EQ(report.cases.size(), 2U);
  const ValidationCase& loaded = report.cases[1];
  ASSERT_EQ(loaded.name, "loaded");
  ASSERT_TRUE(synthetic.row && loaded.row);
  EXPECT_FALSE(synthetic.row->input.applies);
  EXPECT_FALSE(synthetic.row->input_bound);
  EXPECT_TRUE(loaded.row->input_bound);
  EXPECT_DOUBLE_EQ(loaded.row->input.images_per_s,
                   images_per_s_per_core(ImageInput::kJpegHeavyAug));  // one worker
  EXPECT_NEAR(loaded.predicted, images_per_s_per_core(ImageInput::kJpegHeavyAug), 1e-6);
  EXPECT_LT(loaded.predicted, synthetic.predicted);
  bool said = false;
  for (const std::string& note : loaded.notes) said |= note.rfind("input-bound: ", 0) == 0;
  EXPECT_TRUE(said);
}

TEST(Validate, UntrustedSourcesAreKeptApart) {
  const auto files = load_measurements(catalog());
  ValidationOptions options;
  options.include_untrusted = true;
  const ValidationReport report =
      validate(select_measurements(files, {}), catalog(), PlanOptions{}, options);
  int untrusted = 0;
  for (const ValidationCase& v : report.cases) untrusted += !v.trusted && !v.skipped ? 1 : 0;
  EXPECT_GT(untrusted, 0);
  EXPECT_EQ(report.overall.cases, shipped_report().overall.cases);
}

TEST(Validate, FilterBySplitAndGpu) {
  const auto files = load_measurements(catalog());
  ValidationFilter filter;
  filter.split = MeasurementSplit::kCheck;
  filter.gpu = "h100-sxm";
  const std::vector<Measurement> cases = select_measurements(files, filter);
  ASSERT_FALSE(cases.empty());
  for (const Measurement& m : cases) {
    EXPECT_EQ(m.split, MeasurementSplit::kCheck);
    EXPECT_EQ(m.gpu, "h100-sxm");
  }
}

// A case is selected by its name or by source/name; two files may give one name to two cases.
TEST(Validate, FilterByCaseNameOrSourceAndName) {
  std::vector<MeasurementFile> files = load_measurements(catalog());
  ValidationFilter filter;
  filter.case_name = "rtx4090-1gpu-fp16";
  ASSERT_EQ(select_measurements(files, filter).size(), 1u);
  filter.case_name = "lambda-deeplearning-benchmark/rtx4090-1gpu-fp16";
  const std::vector<Measurement> one = select_measurements(files, filter);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "rtx4090-1gpu-fp16");
  filter.case_name = "llm-c-scripts/rtx4090-1gpu-fp16";  // the name under another source
  EXPECT_TRUE(select_measurements(files, filter).empty());
  MeasurementFile twin = files.front();  // the same case names under a second source
  for (Measurement& m : twin.cases) m.source_id = "twin";
  files.push_back(twin);
  filter.case_name = twin.cases.front().name;
  EXPECT_EQ(select_measurements(files, filter).size(), 2u);
  filter.case_name = "twin/" + twin.cases.front().name;
  EXPECT_EQ(select_measurements(files, filter).size(), 1u);
}

// The operations of a case's planned configuration: only when asked, and one micro-step's kernels
// fit inside the planned step (which adds the host, the optimizer and communication).
TEST(Validate, OperationsOfAPlannedCaseFitInsideItsStep) {
  ValidationFilter filter;
  filter.case_name = "lambda-deeplearning-benchmark/rtx4090-1gpu-fp16";
  const std::vector<Measurement> cases = select_measurements(load_measurements(catalog()), filter);
  ValidationOptions options;
  const ValidationReport plain = validate(cases, catalog(), PlanOptions{}, options);
  ASSERT_EQ(plain.cases.size(), 1u);
  EXPECT_TRUE(plain.cases[0].ops.empty());
  options.op_breakdown = true;
  const ValidationReport report = validate(cases, catalog(), PlanOptions{}, options);
  const ValidationCase& v = report.cases.at(0);
  ASSERT_TRUE(v.timed());
  ASSERT_FALSE(v.ops.empty());
  double kernels_s = 0.0;
  bool softmax = false;
  for (const OpTime& op : v.ops) {
    EXPECT_GE(op.forward_s, 0.0) << op.name;  // the biases' gradients run in backward only
    EXPECT_GT(op.forward_s + op.backward_s, 0.0) << op.name;
    kernels_s += op.forward_s + op.backward_s;
    softmax = softmax || op.name == "softmax";
  }
  EXPECT_TRUE(softmax);  // the case's plain attention
  const double micro_steps = static_cast<double>(v.config.grad_acc_steps);
  EXPECT_LE(kernels_s * micro_steps, v.row->step_time_s * (1.0 + 1e-9));
  EXPECT_GT(kernels_s * micro_steps, 0.5 * v.row->step_time_s);
  EXPECT_EQ(v.error, plain.cases[0].error);  // listing the operations changes no figure
}

const Measurement& find_measurement(const std::string& source, const std::string& name) {
  static const std::vector<MeasurementFile> files = load_measurements(catalog());
  for (const MeasurementFile& f : files) {
    for (const Measurement& m : f.cases) {
      if (m.source_id == source && m.name == name) return m;
    }
  }
  throw std::runtime_error("no measurement " + source + "/" + name);
}

// Grouped-query attention and gated MLPs are counted: Llama 2's published parameter counts
// (HuggingFace meta-llama/Llama-2-7b-hf 6,738,415,616 and Llama-2-70b-hf 68,976,648,192; gpudays
// adds the biases and LayerNorm biases Llama does not have, under 0.1%) and PaLM's 6N + 12·L·d·T
// training FLOPs per token.
TEST(Validate, GroupedQueryAttentionAndGatedMlpAreCounted) {
  const Measurement& llama7 = find_measurement("fms-fsdp-readme", "llama2-7b-a100-eager");
  const Measurement& llama70 = find_measurement("fms-fsdp-readme", "llama2-70b-a100-eager");
  EXPECT_TRUE(llama70.representable());
  EXPECT_EQ(llama70.model.arch.n_kv_heads, 8);
  EXPECT_TRUE(llama70.model.arch.gated_ffn);
  EXPECT_NEAR(static_cast<double>(count_params(llama7.model).total) / 6738415616.0, 1.0, 1e-3);
  EXPECT_NEAR(static_cast<double>(count_params(llama70.model).total) / 68976648192.0, 1.0, 1e-3);
  for (const Measurement* m : {&llama7, &llama70}) {
    const ArchSpec& a = m->model.arch;
    const double n = static_cast<double>(count_params(m->model).non_embedding());
    const double palm = 6.0 * n + 12.0 * a.n_layers * a.d_model * a.seq_len;
    EXPECT_NEAR(3.0 * forward_flops_per_sample(m->model) / a.seq_len / palm, 1.0, 0.01);
  }
}

// A small validation set of two sources, one per half, each with timed cases and a memory-only
// case (a peak memory per GPU, no throughput), in temporary measurement files.
std::string memory_source(const std::string& id, const std::string& split) {
  std::string text =
      "[source]\nid = \"" + id + "\"\ntitle = \"t\"\ncitation = \"c\"\nsplit = \"" + split + "\"\n";
  auto add = [&text](const std::string& name,
                     int gpus,
                     const std::string& batch,
                     const std::string& published) {
    text +=
        "\n[[cases]]\nname = \"" + name + "\"\ncitation = \"row\"\nmodel = \"pythia-160m\"\n" +
        "gpu = \"a100-80gb-sxm\"\ngpus_per_node = " + std::to_string(gpus) +
        "\nprecision = \"bf16\"\nfused_attention = true\nactivation_checkpointing = \"none\"\n" +
        "sharding = \"none\"\n" + batch + "[cases.published]\n" + published;
  };
  if (split == "fit") {
    add("timed-1",
        1,
        "micro_batch_size = 8\ngradient_accumulation = 1\n",
        "tokens_per_s_per_gpu = 60000.0\npeak_memory_gib = 12.0\n");
    add("timed-8",
        8,
        "micro_batch_size = 16\ngradient_accumulation = 1\n",
        "tokens_per_s = 400000.0\n");
    // The micro-batch is not published: searched as for any case.
    add("memory-only", 1, "global_batch_size = 32\n", "peak_memory_gib = 20.0\n");
  } else {
    add("timed-4", 4, "micro_batch_size = 8\ngradient_accumulation = 2\n", "step_time_s = 1.5\n");
    add("memory-only-gb",
        4,
        "micro_batch_size = 4\ngradient_accumulation = 1\n",
        "peak_memory_gb = 30.0\napproximate = true\n");
  }
  return text;
}

std::vector<Measurement> memory_set(bool with_memory_only) {
  std::vector<Measurement> out;
  const std::pair<std::string, std::string> sources[] = {{"memonly-fit", "fit"},
                                                         {"memonly-check", "check"}};
  for (const auto& [id, split] : sources) {
    const std::string path = test::write_temp_file(id + ".toml", memory_source(id, split));
    for (const Measurement& m : load_measurement_file(path, catalog()).cases) {
      if (with_memory_only || m.published.has_throughput()) out.push_back(m);
    }
  }
  return out;
}

const ValidationCase& find_in(const ValidationReport& report, const std::string& name) {
  for (const ValidationCase& v : report.cases) {
    if (v.name == name) return v;
  }
  throw std::runtime_error("no case " + name);
}

void expect_same_summary(const ErrorSummary& a, const ErrorSummary& b) {
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.cases, b.cases) << a.group;
  EXPECT_EQ(a.mape, b.mape) << a.group;
  EXPECT_EQ(a.mean_error, b.mean_error) << a.group;
  EXPECT_EQ(a.max_abs_error, b.max_abs_error) << a.group;
  EXPECT_EQ(a.low_error, b.low_error) << a.group;
  EXPECT_EQ(a.high_error, b.high_error) << a.group;
}

// A memory-only case is planned as any other (its unpublished micro-batch searched) and compared
// on its peak memory per GPU: in GiB, the memory check's error.
TEST(Validate, MemoryOnlyCaseIsPlannedAndComparedOnMemory) {
  const ValidationReport report = validate(memory_set(true), catalog(), PlanOptions{}, {});
  const ValidationCase& v = find_in(report, "memory-only");
  ASSERT_FALSE(v.skipped) << v.skip_reason;
  ASSERT_TRUE(v.row.has_value());
  EXPECT_TRUE(v.memory_only);
  EXPECT_FALSE(v.timed());
  EXPECT_EQ(v.metric, "peak_memory_gib");
  EXPECT_DOUBLE_EQ(v.published, 20.0);
  EXPECT_NEAR(v.predicted, v.row->peak_memory_bytes() / (1 << 30), 1e-9);
  EXPECT_NEAR(v.error, v.predicted / v.published - 1.0, 1e-12);
  EXPECT_FALSE(v.published_tokens_per_s_per_gpu.has_value());
  EXPECT_EQ(v.global_batch, 32);
  EXPECT_EQ(v.config.micro_batch_size * v.config.grad_acc_steps, 32);
  bool searched = false;
  for (const std::string& note : v.notes) searched |= note.find("micro-batch not published") == 0;
  EXPECT_TRUE(searched);
  const ValidationCase& gb = find_in(report, "memory-only-gb");
  EXPECT_TRUE(gb.memory_only);
  EXPECT_NEAR(gb.published, 30e9 / (1 << 30), 1e-9);
  EXPECT_TRUE(gb.approximate);
  EXPECT_FALSE(find_in(report, "timed-1").memory_only);
  // Both memory-only cases are in the memory check, beside the timed case with a peak.
  std::vector<std::string> compared;
  for (const MemoryComparison& c : report.memory.comparisons) {
    const ValidationCase& m = report.cases[c.case_index];
    compared.push_back(m.name);
    if (m.memory_only) {
      EXPECT_NEAR(c.error, m.error, 1e-12) << m.name;
    }
  }
  EXPECT_EQ(compared, (std::vector<std::string>{"timed-1", "memory-only", "memory-only-gb"}));
}

// Memory-only cases change no time statistic: MAPE by GPU and split, the worst cases, the range
// coverage, the error bands and the calibration fit are those of the timed cases alone.
TEST(Validate, MemoryOnlyCaseIsInNoTimeStatistic) {
  const ValidationReport with = validate(memory_set(true), catalog(), PlanOptions{}, {});
  const ValidationReport without = validate(memory_set(false), catalog(), PlanOptions{}, {});
  ASSERT_EQ(with.cases.size(), without.cases.size() + 2);
  EXPECT_EQ(with.overall.cases, 3);
  expect_same_summary(with.overall, without.overall);
  ASSERT_EQ(with.by_gpu.size(), without.by_gpu.size());
  for (size_t i = 0; i < with.by_gpu.size(); ++i)
    expect_same_summary(with.by_gpu[i], without.by_gpu[i]);
  ASSERT_EQ(with.by_split.size(), without.by_split.size());
  for (size_t i = 0; i < with.by_split.size(); ++i) {
    expect_same_summary(with.by_split[i], without.by_split[i]);
  }
  auto names = [](const ValidationReport& r, const std::vector<size_t>& indices) {
    std::vector<std::string> out;
    for (size_t i : indices) out.push_back(r.cases[i].name);
    return out;
  };
  EXPECT_EQ(names(with, with.worst), names(without, without.worst));
  EXPECT_EQ(with.worst.size(), 3u);
  ASSERT_TRUE(with.coverage.has_value());
  ASSERT_TRUE(without.coverage.has_value());
  EXPECT_EQ(with.coverage->overall.cases, 1);
  EXPECT_EQ(with.coverage->overall.inside, without.coverage->overall.inside);
  EXPECT_EQ(names(with, with.coverage->outside), names(without, without.coverage->outside));
  const ErrorBands bands_with = error_bands(with);
  const ErrorBands bands_without = error_bands(without);
  EXPECT_EQ(bands_with.residuals().size(), 3u);
  EXPECT_EQ(bands_with.all(), bands_without.all());
  EXPECT_EQ(bands_with.for_point(find_in(with, "memory-only").point),
            bands_without.for_point(find_in(with, "memory-only").point));
  EXPECT_EQ(with.memory.comparisons.size(), 3u);
  EXPECT_EQ(without.memory.comparisons.size(), 1u);
  // The calibration fit on the fitting half, with and without its memory-only case.
  std::vector<Measurement> fit_with, fit_without;
  for (const Measurement& m : memory_set(true)) {
    if (m.split == MeasurementSplit::kFit) fit_with.push_back(m);
  }
  for (const Measurement& m : memory_set(false)) {
    if (m.split == MeasurementSplit::kFit) fit_without.push_back(m);
  }
  FitOptions one_pass;
  one_pass.max_passes = 1;
  const CalibrationFit a = fit_calibration(fit_with, catalog(), PlanOptions{}, one_pass);
  const CalibrationFit b = fit_calibration(fit_without, catalog(), PlanOptions{}, one_pass);
  EXPECT_EQ(a.fit_cases, 2);
  EXPECT_EQ(a.fit_cases, b.fit_cases);
  EXPECT_EQ(a.fit_mape_before, b.fit_mape_before);
  EXPECT_EQ(a.fit_mape_after, b.fit_mape_after);
  EXPECT_EQ(a.values, b.values);
}

// A memory-only case shows in every format with its metric peak_memory_gib, GiB and its memory
// error; the JSON keeps every key of an ordinary case and says which cases are memory-only.
TEST(Validate, MemoryOnlyCaseRendersInEveryFormat) {
  const ValidationReport report = validate(memory_set(true), catalog(), PlanOptions{}, {});
  std::ostringstream csv;
  cases_table(report).print_csv(csv);
  EXPECT_NE(csv.str().find("memory-only,pythia-160m,1,a100-80gb-sxm,"), std::string::npos)
      << csv.str();
  EXPECT_NE(csv.str().find(",peak_memory_gib,20,"), std::string::npos) << csv.str();
  std::ostringstream text;
  print_table(text, report);
  EXPECT_NE(text.str().find("peak_memory_gib"), std::string::npos);
  EXPECT_NE(text.str().find("Memory-only cases"), std::string::npos);
  std::ostringstream json;
  print_json(json, report, "");
  const auto j = nlohmann::json::parse(json.str());
  ASSERT_EQ(j["cases"].size(), 5u);
  for (const auto& c : j["cases"]) {
    for (const char* key : {"metric",
                            "published",
                            "predicted",
                            "error",
                            "memory_only",
                            "micro_batch_size",
                            "published_tokens_per_s_per_gpu",
                            "predicted_tokens_per_s_per_gpu",
                            "fits"}) {
      EXPECT_TRUE(c.contains(key)) << c["case"] << ": " << key;
    }
    const bool memory_only = c["case"].get<std::string>().rfind("memory-only", 0) == 0;
    EXPECT_EQ(c["memory_only"], memory_only) << c["case"];
    if (!memory_only) continue;
    EXPECT_EQ(c["metric"], "peak_memory_gib");
    EXPECT_TRUE(c["published_tokens_per_s_per_gpu"].is_null());
    const ValidationCase& v = find_in(report, c["case"].get<std::string>());
    EXPECT_DOUBLE_EQ(c["error"].get<double>(), v.error);
  }
  EXPECT_EQ(j["overall"]["cases"], 3);
  EXPECT_EQ(j["worst"].size(), 3u);
  EXPECT_EQ(j["peak_memory"]["count"], 3);
  EXPECT_EQ(j["peak_memory"]["with_range_count"], 3);
  EXPECT_TRUE(j["peak_memory"]["inside_range_count"].is_number_integer());
  for (const nlohmann::json& c : j["peak_memory"]["cases"]) {
    EXPECT_LT(c["predicted_low_gib"].get<double>(), c["predicted_high_gib"].get<double>());
    EXPECT_TRUE(c["inside_range"].is_boolean()) << c["case"];
  }
}

// A case with neither a throughput nor a peak (the loader refuses one) is skipped with why.
TEST(Validate, CaseWithNeitherFigureIsSkipped) {
  Measurement m = memory_set(false).front();
  m.published = PublishedFigures{};
  const ValidationReport report = validate({m}, catalog(), PlanOptions{}, {});
  ASSERT_EQ(report.cases.size(), 1u);
  EXPECT_TRUE(report.cases[0].skipped);
  EXPECT_NE(report.cases[0].skip_reason.find("no comparable throughput figure or peak memory"),
            std::string::npos)
      << report.cases[0].skip_reason;
  EXPECT_EQ(report.overall.cases, 0);
  EXPECT_TRUE(report.memory.comparisons.empty());
}

// The one-configuration path evaluates exactly what the full search evaluates.
TEST(PinnedPlan, EqualsTheSearchRow) {
  const ModelSpec& model = catalog().model("pythia-410m");
  const Cluster cluster{{1, 4}, &catalog().gpu("a100-80gb-sxm")};
  const PlanResult all = plan(model, cluster, PlanOptions{});
  for (size_t i = 0; i < all.rows.size(); i += 7) {
    const PlanRow& row = all.rows[i];
    const PlanRow one = plan_configuration(model, cluster, row.config, PlanOptions{});
    EXPECT_EQ(one.step_time_s, row.step_time_s) << describe(row.config);
    EXPECT_EQ(one.peak_memory_bytes(), row.peak_memory_bytes()) << describe(row.config);
    EXPECT_EQ(one.fits, row.fits);
  }
}

TEST(PinnedPlan, PinKeepsOnlyMatchingRows) {
  const ModelSpec& model = catalog().model("pythia-410m");
  const Cluster cluster{{1, 4}, &catalog().gpu("a100-80gb-sxm")};
  PlanOptions options;
  options.pin.pin(&MethodSet::sharding, Sharding::kZero2);
  options.pin.micro_batch_size = 8;
  options.pin.pin(&MethodSet::activation_checkpointing, false);
  const PlanResult result = plan(model, cluster, options);
  ASSERT_EQ(result.rows.size(), 4u);  // free-lunch off/on x offloading off/on
  for (const PlanRow& r : result.rows) EXPECT_TRUE(options.pin.matches(r.config));
  options.pin.pin(&MethodSet::free_lunch, true);
  options.pin.pin(&MethodSet::offloading, false);
  EXPECT_EQ(plan(model, cluster, options).rows.size(), 1u);
  EXPECT_EQ(describe(options.pin),
            "free-lunch on, checkpointing off, sharding zero_2, offloading off, micro-batch 8");
}

TEST(PinnedPlan, ImpossiblePinSaysWhy) {
  const ModelSpec& model = catalog().model("pythia-410m");
  const Cluster one{{1, 1}, &catalog().gpu("a100-80gb-sxm")};
  auto message = [&](const ConfigurationPin& pin, MethodPreset preset = MethodPreset::kAll) {
    PlanOptions options;
    options.pin = pin;
    options.preset = preset;
    try {
      plan(model, one, options);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ConfigurationPin odd_micro_batch;
  odd_micro_batch.micro_batch_size = 3;
  EXPECT_NE(message(odd_micro_batch).find("not a power of two"), std::string::npos);
  ConfigurationPin sharded_alone;
  sharded_alone.pin(&MethodSet::sharding, Sharding::kZero1);
  sharded_alone.pin(&MethodSet::offloading, false);
  EXPECT_NE(message(sharded_alone).find("one GPU"), std::string::npos);
  ConfigurationPin offload_unsharded;
  offload_unsharded.pin(&MethodSet::sharding, Sharding::kNone);
  offload_unsharded.pin(&MethodSet::offloading, true);
  EXPECT_NE(message(offload_unsharded).find("needs sharding"), std::string::npos);
  ConfigurationPin free_lunch;
  free_lunch.pin(&MethodSet::free_lunch, true);
  EXPECT_NE(message(free_lunch, MethodPreset::kNaive).find("preset 'naive'"), std::string::npos);
}

}  // namespace
}  // namespace gpudays
