// The input pipeline's bound on a step: the host CPU cores that load and augment samples for each
// GPU, against the samples the GPU consumes. Text is read pre-tokenized (an index look-up and a
// copy per sample), which never binds; images decoded from JPEG and augmented on the host can.
// Rates are images per second per core, measured with scripts/measure-input-pipeline.py
// (docs/planner.md, "Input pipelines"). One core per GPU runs the training process itself; the
// others are the loader's workers.
#pragma once

#include <cstdint>
#include <string>

namespace gpudays {

enum class ImageInput {
  kSynthetic,     // tensors made on the GPU or reused (a benchmark's): no loader, never binds
  kPacked,        // gpudays' packed images (data images): decoded once, a copy per sample
  kJpeg,          // JPEG decode + RandomResizedCrop, flip, normalise (ImageNet's standard)
  kJpegHeavyAug,  // the same + RandAugment(2, 9) and random erasing (DeiT's recipe)
};

std::string to_string(ImageInput input);
ImageInput parse_image_input(const std::string& text);  // InputError naming the choices

// Measured 2026-12-02 on this project's build machine (AMD EPYC, one thread, Pillow 13.0 with its
// libjpeg-turbo, torchvision 0.26; 500 x 375 JPEGs of quality 90). Packed images are a 150 KB
// copy each (3 x 224 x 224 uint8), taken at a conservative 2 GB/s per core. Synthetic input has no
// rate (0): input_bound does not apply to it.
double images_per_s_per_core(ImageInput input);

struct InputOptions {
  ImageInput image_input = ImageInput::kPacked;  // what gpudays' trainer reads
  // Host cores per GPU: an assumption unless the user or the cluster file states it (a DGX A100
  // has 16, a DGX-1 5, a 4-GPU workstation with a 32-core CPU 8).
  int64_t cpu_cores_per_gpu = 8;
  bool operator==(const InputOptions&) const = default;
};

// The input pipeline of one step on one GPU.
struct InputBound {
  bool applies = false;             // image families read from a loader (not synthetic) only
  double images_per_s = 0.0;        // what the GPU's loader workers deliver
  double step_time_s = 0.0;         // time to load one step's samples for one GPU
  double device_step_time_s = 0.0;  // the GPU's own step time, set by the planner
  bool operator==(const InputBound&) const = default;
};

// `samples_per_gpu`: samples one GPU consumes per optimizer step.
InputBound input_bound(bool images, double samples_per_gpu, const InputOptions& options);

}  // namespace gpudays
