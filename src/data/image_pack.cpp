// pack_images and load_square_image (image_pack.h): listing, decoding, resizing, writing.
#include "data/image_pack.h"

#include <sys/stat.h>

#include <stb_image.h>
#include <stb_image_resize.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/output_files.h"
#include "data/samples.h"

namespace gpudays::data {
namespace {

namespace fs = std::filesystem;

struct LabelledFile {
  std::string path;
  int32_t label = 0;
};

bool is_image(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(
      ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// The entries of `dir`; InputError (naming it and the system's reason) when it cannot be listed.
std::vector<fs::directory_entry> entries(const fs::path& dir) {
  std::error_code error;
  std::vector<fs::directory_entry> found;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    found.push_back(*it);
  if (error) throw InputError(fmt::format("cannot list {}: {}", dir.string(), error.message()));
  return found;
}

std::vector<LabelledFile> list_images(const std::string& folder,
                                      std::vector<std::string>& classes) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) throw InputError(fmt::format("{} is not a folder", folder));
  for (const auto& entry : entries(folder))
    if (entry.is_directory(error)) classes.push_back(entry.path().filename().string());
  std::sort(classes.begin(), classes.end());
  std::vector<LabelledFile> files;
  for (size_t label = 0; label < classes.size(); ++label) {
    std::vector<std::string> names;
    for (const auto& entry : entries(fs::path(folder) / classes[label]))
      if (entry.is_regular_file(error) && is_image(entry.path()))
        names.push_back(entry.path().string());
    std::sort(names.begin(), names.end());
    for (auto& name : names) files.push_back({std::move(name), static_cast<int32_t>(label)});
  }
  if (files.empty())
    throw InputError(
        fmt::format("{} has no .jpg, .jpeg or .png files in class subfolders", folder));
  return files;
}

// The output is a file outside the input folder: one inside it would replace an image while it is
// read, or be read as one by the next run; a hard link to an image is refused too.
void check_output(const ImagePackOptions& options, const std::vector<LabelledFile>& files) {
  check_output_file(options.out_path, "--out");
  if (inside_directory(options.out_path, options.folder)) {
    throw InputError(fmt::format("--out {} is inside the input folder {}; write it elsewhere",
                                 options.out_path,
                                 options.folder));
  }
  // Outside the folder, only a hard link to an image can be one: an --out that does not exist yet
  // is none, and one that does is compared by device and inode, one stat per image.
  struct stat out {};
  if (::stat(options.out_path.c_str(), &out) != 0) return;
  for (const LabelledFile& file : files) {
    struct stat in {};
    if (::stat(file.path.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      throw InputError(fmt::format("{} is an input and an output (--out {}); choose another output",
                                   file.path,
                                   options.out_path));
    }
  }
}

}  // namespace

std::vector<uint8_t> load_square_image(const std::string& path, int64_t size_px, bool* upscaled) {
  int width = 0, height = 0, channels = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load(path.c_str(), &width, &height, &channels, 3), stbi_image_free);
  if (!pixels) {
    const char* reason = stbi_failure_reason();  // may be empty (a truncated file)
    throw InputError(fmt::format("{}: cannot decode: {}",
                                 path,
                                 reason != nullptr && *reason != '\0'
                                     ? reason
                                     : "truncated or not an image stb_image reads"));
  }
  if (upscaled) *upscaled = std::min(width, height) < size_px;
  const double scale = static_cast<double>(size_px) / std::min(width, height);
  const int resized_w = std::max<int>(size_px, static_cast<int>(std::lround(width * scale)));
  const int resized_h = std::max<int>(size_px, static_cast<int>(std::lround(height * scale)));
  std::vector<uint8_t> resized(static_cast<size_t>(resized_w) * resized_h * 3);
  if (!stbir_resize_uint8(
          pixels.get(), width, height, 0, resized.data(), resized_w, resized_h, 0, 3))
    throw InputError(
        fmt::format("{}: cannot resize {}x{} to {}x{}", path, width, height, resized_w, resized_h));
  const int64_t x0 = (resized_w - size_px) / 2, y0 = (resized_h - size_px) / 2;
  std::vector<uint8_t> square(static_cast<size_t>(3 * size_px * size_px));
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < size_px; ++y)
      for (int64_t x = 0; x < size_px; ++x)
        square[(c * size_px + y) * size_px + x] = resized[((y0 + y) * resized_w + x0 + x) * 3 + c];
  return square;
}

ImagePackSummary pack_images(const ImagePackOptions& options) {
  if (options.size_px < 1) throw InputError(fmt::format("image size {} px", options.size_px));
  ImagePackSummary summary;
  const std::vector<LabelledFile> files = list_images(options.folder, summary.class_names);
  check_output(options, files);
  const std::vector<int64_t> order =
      epoch_order(static_cast<int64_t>(files.size()), options.seed, 0);
  // Grows beside out_path and replaces it only when complete (common/output_files.h); SIGINT and
  // SIGTERM stop it between images, removing the temporary file.
  const InterruptScope interrupt_scope;
  AtomicFile out(options.out_path);
  const uint64_t count = files.size();
  const uint32_t shape[4] = {3,
                             static_cast<uint32_t>(options.size_px),
                             static_cast<uint32_t>(options.size_px),
                             static_cast<uint32_t>(summary.class_names.size())};
  out.write("GDIMAGE1", 8);
  out.write(&count, 8);
  out.write(shape, sizeof(shape));
  std::vector<int32_t> labels;
  for (const int64_t i : order) labels.push_back(files[i].label);
  out.write(labels.data(), labels.size() * 4);
  for (const int64_t i : order) {
    throw_if_interrupted();
    bool upscaled = false;
    const std::vector<uint8_t> square =
        load_square_image(files[i].path, options.size_px, &upscaled);
    summary.upscaled += upscaled ? 1 : 0;
    out.write(square.data(), square.size());
  }
  for (const std::string& name : summary.class_names) {
    const uint32_t length = static_cast<uint32_t>(name.size());
    out.write(&length, 4);
    out.write(name.data(), name.size());
  }
  throw_if_interrupted();
  out.commit();
  summary.images = static_cast<int64_t>(count);
  summary.classes = static_cast<int64_t>(summary.class_names.size());
  return summary;
}

}  // namespace gpudays::data
