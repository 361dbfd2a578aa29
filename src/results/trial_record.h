// One benchmark trial as stored in the results database: what was run (model, hardware, the
// configuration), what the trial measured (status, timings, memory, the device it ran on), what
// the sweep derived from it (throughput, utilisation, days, the planner's prediction) and what
// produced it (software version and commit, host, date).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search_space/cluster.h"
#include "search_space/configuration.h"

namespace gpudays {

// kKilled: stopped by a signal from outside (SIGKILL, SIGTERM, SIGINT, SIGHUP: the OOM killer,
// pre-emption, a stray kill), which says nothing about the configuration: a rerun measures it
// again. kCrash: the trial failed by itself (a fault, an abort, an error exit) and stays recorded.
enum class TrialStatus { kOk, kOutOfMemory, kCrash, kTimeout, kRejected, kKilled };
std::string to_string(TrialStatus status);
TrialStatus parse_trial_status(const std::string& text);  // throws InputError

// How a step time was measured: "whole" optimizer steps, "parts" composed as
// (accumulation - 1) x micro_step_time_s + last_micro_step_time_s + optimizer_time_s (medians),
// or "reference": the reference benchmark's composition, steps of one micro-step (with its
// gradient communication) composed as accumulation x last_micro_step_time_s + optimizer_time_s.
enum class StepTiming { kWhole, kParts, kReference };
std::string to_string(StepTiming timing);               // "whole", "parts", "reference"
StepTiming parse_step_timing(const std::string& text);  // throws InputError

// The rule a trial was measured under, part of its identity: "gpudays" (the guided or exhaustive
// search: any micro-batch, whole or composed steps of the real accumulation) or "reference" (the
// reference benchmark's: per method set only the largest power-of-two micro-batch that fits,
// timed as StepTiming::kReference). The two time one configuration differently; readers keep them
// apart (results/results_db.h: TrialFilter::rule).
enum class MeasurementRule { kGpudays, kReference };
std::string to_string(MeasurementRule rule);                      // "gpudays", "reference"
MeasurementRule parse_measurement_rule(const std::string& text);  // throws InputError naming both

// What one trial process measures and reports (sweep/trial_spec.h carries it as JSON).
struct TrialMeasurement {
  TrialStatus status = TrialStatus::kCrash;
  std::string message;  // why it failed or was rejected
  int64_t steps_timed = 0;
  double step_time_median_s = 0.0;
  double step_time_min_s = 0.0;
  double step_time_max_s = 0.0;
  int64_t peak_memory_bytes = 0;  // the largest rank's
  StepTiming timing = StepTiming::kWhole;
  double micro_step_time_s = 0.0;       // parts: a micro-step without gradient communication
  double last_micro_step_time_s = 0.0;  // parts: the last micro-step, with it
  double optimizer_time_s = 0.0;        // parts
  // A parts trial that checked its composition against whole steps records their median here and
  // timing_check "agrees" or "disagrees" (more than 5% apart); "" otherwise.
  double check_step_time_s = 0.0;
  std::string timing_check;
  // CUDA devices: the caching allocator's peak reserved bytes (allocated plus what it holds
  // cached, the graph's pool included); 0 elsewhere.
  int64_t peak_reserved_bytes = 0;
  // How the timed micro-steps ran where a CUDA graph applies: "replayed" (every one a replay),
  // "eager: <why>" (the capture failed or was dropped), "mixed" (some of each); "" elsewhere.
  std::string cuda_graph;
  std::string scan;         // Mamba: the selective scan that ran (models/selective_scan.h); ""
  std::string device_name;  // as the device reports it
  std::string driver;
  std::string torch_version;
};

struct TrialRecord {
  // Identity: the model, the configuration and the hardware it ran on. The model is its digest
  // (catalog/model_loader.h: model_digest, of its architecture and recipe); its name is shown,
  // never matched: two models of one name are two models. Empty only in a row an older schema
  // stored under a name no catalog model has (results_db.h).
  std::string model_digest;
  std::string model;  // the name of the model that measured it
  std::string gpu;    // catalog name, or "cpu" for the host CPU
  ClusterShape cluster;
  Configuration config;
  int64_t memory_limit_bytes = 0;  // 0: the device's own memory
  MeasurementRule rule = MeasurementRule::kGpudays;

  TrialMeasurement measured;

  // Derived by the sweep from the measurement and the planner's row.
  double samples_per_s = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;
  double hfu = 0.0;
  double training_days = 0.0;
  double gpu_days = 0.0;
  double predicted_step_time_s = 0.0;
  int64_t predicted_memory_bytes = 0;

  // Provenance (the device's own is in `measured`).
  std::string gpudays_version;
  std::string git_commit;
  std::string hostname;
  std::string created_at;  // ISO 8601 UTC

  bool ok() const { return measured.status == TrialStatus::kOk; }
  double step_time_s() const { return measured.step_time_median_s; }

  // The identity as one string: two trials with equal keys measure the same thing (the catalog
  // GPU, not the device's own name, identifies the hardware, so a rerun finds it before running).
  std::string key() const;
};

// "pythia-1b on 4 x a100-80gb-sxm, free-lunch + zero_1, micro-batch 8, accumulation 32".
std::string describe(const TrialRecord& trial);

// Why a stored row cannot be a real measurement (a non-positive or unordered step time, an MFU
// above 1, sizes out of range), or empty when it can. Rows that fail are never used. What its
// figures should be is results/trial_rederive.h's.
std::string row_problem(const TrialRecord& trial);

// The fastest trial with status ok, or nullptr when none is. Under the reference rule only each
// method set's pick competes (reference_picks).
const TrialRecord* fastest_ok(const std::vector<TrialRecord>& trials);

// The reference rule's result of each method set (of one model, GPU, shape and memory limit): its
// successful trial of the largest micro-batch, whatever the smaller ones measured. Trials of the
// gpudays rule pass through unchanged; the order is kept.
std::vector<TrialRecord> reference_picks(const std::vector<TrialRecord>& trials);

}  // namespace gpudays
