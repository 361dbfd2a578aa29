// open_image_samples (samples.h): the packed image file (layout in image_pack.h), memory-mapped
// and validated when opened: magic, shape, size, labels and class names.
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "data/mapped_file.h"
#include "data/samples.h"

namespace gpudays::data {
namespace {

constexpr int64_t kHeaderBytes = 32;

[[noreturn]] void fail(const std::string& path, int64_t offset, const std::string& what) {
  throw InputError(fmt::format("{}: offset {}: {}", path, offset, what));
}

class PackedImages : public ImageSamples {
 public:
  explicit PackedImages(const std::string& path) : file_(path) {
    const uint8_t* d = file_.data();
    const int64_t size = file_.size_bytes();
    if (size < kHeaderBytes)
      fail(path, size, fmt::format("truncated: {} bytes, the header alone is 32", size));
    if (std::memcmp(d, "GDIMAGE1", 8) != 0)
      fail(path, 0, "wrong magic; not a packed image file (expected GDIMAGE1)");
    uint64_t count;
    uint32_t shape[4];
    std::memcpy(&count, d + 8, 8);
    std::memcpy(shape, d + 16, 16);
    if (shape[0] < 1 || shape[0] > 4 || shape[1] < 1 || shape[2] < 1 || shape[1] > 65536 ||
        shape[2] > 65536)
      fail(path, 16, fmt::format("impossible shape {}x{}x{}", shape[0], shape[1], shape[2]));
    if (shape[3] < 1) fail(path, 28, "no classes");
    image_bytes_ = int64_t{shape[0]} * shape[1] * shape[2];
    if (count < 1 || count > static_cast<uint64_t>(size) / (4 + image_bytes_))
      fail(path,
           8,
           fmt::format("{} images of {} bytes do not fit in {} bytes", count, image_bytes_, size));
    count_ = static_cast<int64_t>(count);
    channels_ = shape[0], height_ = shape[1], width_ = shape[2], classes_ = shape[3];
    pixels_at_ = kHeaderBytes + 4 * count_;
    for (int64_t i = 0; i < count_; ++i) {
      int32_t label;
      std::memcpy(&label, d + kHeaderBytes + 4 * i, 4);
      if (label < 0 || label >= classes_)
        fail(path, kHeaderBytes + 4 * i, fmt::format("label {} outside [0, {})", label, classes_));
    }
    check_names(path, pixels_at_ + count_ * image_bytes_);
  }
  int64_t num_samples() const override { return count_; }
  int64_t channels() const override { return channels_; }
  int64_t height() const override { return height_; }
  int64_t width() const override { return width_; }
  int64_t num_classes() const override { return classes_; }
  int64_t read_sample(int64_t index, uint8_t* pixels) const override {
    if (index < 0 || index >= count_)
      throw InputError(fmt::format("image {} out of range [0, {})", index, count_));
    std::memcpy(pixels, file_.data() + pixels_at_ + index * image_bytes_, image_bytes_);
    int32_t label;
    std::memcpy(&label, file_.data() + kHeaderBytes + 4 * index, 4);
    return label;
  }

 private:
  void check_names(const std::string& path, int64_t at) const {
    for (int64_t k = 0; k < classes_; ++k) {
      uint32_t length = 0;
      if (at + 4 > file_.size_bytes())
        fail(path, at, fmt::format("truncated before class name {}", k));
      std::memcpy(&length, file_.data() + at, 4);
      if (length > file_.size_bytes() - at - 4)
        fail(path, at, fmt::format("class name {} runs past the end", k));
      at += 4 + length;
    }
    if (at != file_.size_bytes())
      fail(path, at, fmt::format("{} unexpected bytes at the end", file_.size_bytes() - at));
  }

  MappedFile file_;
  int64_t count_ = 0, channels_ = 0, height_ = 0, width_ = 0, classes_ = 0;
  int64_t image_bytes_ = 0, pixels_at_ = 0;
};

}  // namespace

std::unique_ptr<ImageSamples> open_image_samples(const std::string& path) {
  return std::make_unique<PackedImages>(path);
}

}  // namespace gpudays::data
