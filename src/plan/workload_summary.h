// Totals of one micro-batch's workload on one device model: compute times, saved activations,
// transient buffers and FLOPs — what the memory and time models consume.
#pragma once

#include "plan/device_model.h"
#include "plan/workload.h"

namespace gpudays {

struct WorkloadSummary {
  double forward_s = 0.0;
  double backward_s = 0.0;
  // One repeated block (the first kind: a transformer layer), forward and backward: its kernels'
  // GPU time alone, no host dispatch bound, recomputation or optimizer. What a per-layer benchmark
  // that hides the launch latency times (validate's layer_time_ms); 0 without blocks.
  double layer_device_s = 0.0;
  double recompute_s = 0.0;               // what checkpointing recomputes: the checkpointed blocks'
                                          // forward, less what a per-op policy keeps
  double stem_saved_bytes = 0.0;          // outside the blocks and the head (kept either way)
  double block_saved_bytes = 0.0;         // all blocks, no checkpointing
  double checkpointed_block_bytes = 0.0;  // all blocks under checkpointing: a checkpointed
                                          // block's input (and what a per-op policy keeps),
                                          // the other blocks' activations
  double checkpointed_input_bytes = 0.0;  // of those, the checkpointed blocks' inputs
  double max_block_input_bytes = 0.0;     // one checkpointed block's input
  double max_block_saved_bytes = 0.0;     // one block's activations, alive while it is recomputed
  double head_saved_bytes = 0.0;          // logits and loss
  double head_transient_bytes = 0.0;
  double head_forward_bytes = 0.0;  // the head's tensors as its forward ends
  double head_output_bytes = 0.0;   // Workload::head_output_bytes
  double returned_bytes = 0.0;      // all blocks' Block::returned_bytes
  bool holds_output = false;        // Workload::holds_output
  double max_tensor_bytes = 0.0;    // largest saved tensor group (its gradient is a buffer too)
  // What an op of the stem or a block holds beyond the activations: its short-lived buffers and
  // its saved group's gradient, less what the later ops of its block keep (not yet allocated as
  // forward reaches the op, freed by backward before it); the stem's whole. The most of them.
  double op_buffer_bytes = 0.0;
  double model_flops = 0.0;      // forward + backward = 3x forward
  double recompute_flops = 0.0;  // forward FLOPs recomputed under checkpointing
  // What the kernels execute (causal fused attention skips the masked half): the FLOPs a device
  // must do, which no step time may beat at the matmul ceiling. Model FLOPs count attention whole.
  double exec_flops = 0.0;  // forward + backward
  double recompute_exec_flops = 0.0;
  int64_t largest_block_params = 0;
  double blocks_params = 0.0;  // every block's parameters (count x params over the kinds)
  int64_t param_tensors = 0;
  int64_t largest_param_tensor = 0;         // elements (Workload::largest_param_tensor)
  int64_t input_only_embedding_params = 0;  // Workload::input_only_embedding_params
  int64_t layers = 0;  // how many of the first repeated block (a transformer's layers)
  int64_t samples = 0;
  int64_t tokens_per_sample = 0;
  bool python_forward = false;  // Workload::python_forward
};

WorkloadSummary summarize(const Workload& workload, const DeviceModel& device);

}  // namespace gpudays
