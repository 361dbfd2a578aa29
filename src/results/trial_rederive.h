// A stored trial's figures re-derived, not believed: samples and tokens per second, training days,
// GPU-days, MFU and HFU follow from its step time, its model and its hardware by the code the sweep
// stored them with (the planner's StepWork, plan/step_figures.h). A row whose stored figures
// disagree, or whose step time or peak memory its hardware cannot have, is never used.
#pragma once

#include <string>

#include "catalog/gpu_spec.h"
#include "catalog/model_spec.h"
#include "plan/step_figures.h"
#include "results/trial_record.h"

namespace gpudays {

// How far a stored figure may be from its re-derivation, relative to it. The sweep stores what
// the same code derives, so the two agree to the last bit on one build; 1e-3 leaves room for
// another build's rounding and is far below any edit that changes a printed figure (MFU prints to
// 0.1 points: 0.25% of an MFU of 40%).
inline constexpr double kFigureTolerance = 1e-3;

// The most MFU and HFU can be (trial_validate.cpp gives the reasons): of a GPU's datasheet peak
// (whose measured ceiling may pass it by up to the GPU loader's 1.2, a GeForce card's boost), and
// of the host CPU's measured matmul, with the margin of causal attention counted whole.
inline constexpr double kMaxGpuUtilisation = 1.4;
static_assert(kMaxGpuUtilisation >= kMaxMatmulCeilingFraction * 1.16,
              "a GPU row may count causal attention's ~17% above the highest matmul ceiling");
inline constexpr double kMaxHostCpuUtilisation = 1.2;

// The work of one optimizer step of the trial's configuration and model on its hardware: `gpu` the
// catalog GPU the trial names, or nullptr for the host CPU (whose measured peak the row does not
// keep: its StepWork has no peak). Throws InputError for a configuration the planner cannot
// evaluate (a batch that does not make the model's global batch, bf16 on a GPU without it).
StepWork trial_step_work(const TrialRecord& trial, const ModelSpec& model, const GpuSpec* gpu);

// For a successful trial: derives its figures from its step time, replaces the stored ones with
// them, and returns why the row cannot be real (a stored figure more than kFigureTolerance from its
// derivation; an MFU or HFU past the device's peak; a peak memory past its memory), or "" when it
// can. On the host CPU, MFU is relative to the measured peak of the host that ran the trial, which
// the row does not keep: the stored MFU and HFU are checked against each other, against the
// bound, and against the fastest CPU (catalog/host_cpu.h) instead. Other trials: "".
std::string rederive_figures(TrialRecord& trial, const ModelSpec& model, const GpuSpec* gpu);

}  // namespace gpudays
