// The input pipeline's bound: workers x measured rate per core.
#include "plan/input_pipeline.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {

std::string to_string(ImageInput input) {
  switch (input) {
    case ImageInput::kSynthetic:
      return "synthetic";
    case ImageInput::kPacked:
      return "packed";
    case ImageInput::kJpeg:
      return "jpeg";
    case ImageInput::kJpegHeavyAug:
      return "jpeg-deit";
  }
  return "?";
}

ImageInput parse_image_input(const std::string& text) {
  for (ImageInput i :
       {ImageInput::kSynthetic, ImageInput::kPacked, ImageInput::kJpeg, ImageInput::kJpegHeavyAug})
    if (to_string(i) == text) return i;
  throw InputError(fmt::format("'{}' is not one of synthetic, packed, jpeg or jpeg-deit", text));
}

double images_per_s_per_core(ImageInput input) {
  constexpr double kPackedImageBytes = 3.0 * 224 * 224;
  constexpr double kCopyBytesPerS = 2e9;
  switch (input) {
    case ImageInput::kSynthetic:
      return 0.0;
    case ImageInput::kPacked:
      return kCopyBytesPerS / kPackedImageBytes;
    case ImageInput::kJpeg:
      return 644.0;  // scripts/measure-input-pipeline.py "standard"
    case ImageInput::kJpegHeavyAug:
      return 399.0;  // "deit"
  }
  return 0.0;
}

InputBound input_bound(bool images, double samples_per_gpu, const InputOptions& options) {
  InputBound b;
  if (!images || options.image_input == ImageInput::kSynthetic) return b;
  b.applies = true;
  const int64_t workers = std::max<int64_t>(1, options.cpu_cores_per_gpu - 1);
  b.images_per_s = static_cast<double>(workers) * images_per_s_per_core(options.image_input);
  b.step_time_s = samples_per_gpu / b.images_per_s;
  return b;
}

}  // namespace gpudays
