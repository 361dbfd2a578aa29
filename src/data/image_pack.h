// The packed image format of the vision families and its converter from a folder of JPEG/PNG
// files, one subfolder per class (decoded with stb_image from Debian's libstb). Layout
// (little-endian):
//   offset 0   8 bytes  magic "GDIMAGE1"
//   offset 8   u64      image count N
//   offset 16  u32 channels C, u32 height H, u32 width W, u32 class count K
//   offset 32  i32[N]   labels, each in [0, K)
//   then       u8[N*C*H*W] pixels, image by image, channels-first (RGB)
//   then       K class names, each a u32 byte length and its UTF-8 bytes (label order)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpudays::data {

struct ImagePackOptions {
  std::string folder;  // FOLDER/CLASS/IMAGE.{jpg,jpeg,png}; classes in name order
  std::string out_path;
  int64_t size_px = 224;  // shorter side resized to this, then the centre square cropped
  uint64_t seed = 0;      // the images are written in a seeded random order, so a held-out tail
                          // (data/samples.h split_samples) mixes the classes
};

struct ImagePackSummary {
  int64_t images = 0;
  int64_t classes = 0;
  // Images whose shorter side was below size_px: enlarged to it, so they carry less detail than
  // their pixels say (the command says how many).
  int64_t upscaled = 0;
  std::vector<std::string> class_names;
};

// Throws InputError for a missing folder, no images, an image that cannot be decoded (naming
// it), or an output that names no file or lies inside the folder (before anything is written);
// EnvironmentError when the output cannot be written.
ImagePackSummary pack_images(const ImagePackOptions& options);

// Decodes an image file to RGB, resizes its shorter side to size_px and crops the centre square.
// Returns size_px * size_px * 3 bytes, channels-first; `upscaled`, when given, says whether the
// shorter side was below size_px.
std::vector<uint8_t> load_square_image(const std::string& path,
                                       int64_t size_px,
                                       bool* upscaled = nullptr);

}  // namespace gpudays::data
