// The packed image format (data/image_pack.h): a folder of PNG and JPEG files per class becomes
// square channels-first images with labels, resized on the shorter side and centre-cropped; a
// malformed packed file is a one-line error naming the file and offset.
#include <gtest/gtest.h>

#include <stb_image_write.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/error.h"
#include "data/image_pack.h"
#include "data/samples.h"
#include "process_dir.h"

namespace gpudays::data {
namespace {

namespace fs = std::filesystem;

// A width x height RGB image: the left half `left`, the right half `right`.
std::vector<uint8_t> halves(int width,
                            int height,
                            std::array<uint8_t, 3> left,
                            std::array<uint8_t, 3> right) {
  std::vector<uint8_t> pixels(width * height * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        pixels[(y * width + x) * 3 + c] = (x < width / 2 ? left : right)[c];
  return pixels;
}

std::string make_folder() {
  const fs::path root = fs::path(test::process_temp_dir().fresh_dir("images"));
  fs::create_directories(root / "cat");
  fs::create_directories(root / "dog");
  fs::create_directories(root / "empty");
  const auto red_blue = halves(80, 40, {255, 0, 0}, {0, 0, 255});
  stbi_write_png((root / "cat" / "a.png").c_str(), 80, 40, 3, red_blue.data(), 80 * 3);
  const auto green = halves(30, 60, {0, 255, 0}, {0, 255, 0});
  stbi_write_jpg((root / "dog" / "b.JPG").c_str(), 30, 60, 3, green.data(), 95);
  stbi_write_png((root / "dog" / "c.png").c_str(), 30, 60, 3, green.data(), 30 * 3);
  std::ofstream(root / "dog" / "notes.txt") << "not an image";
  return root.string();
}

TEST(DataImages, PacksResizesAndCropsWithLabels) {
  ImagePackOptions options;
  options.folder = make_folder();
  options.out_path = (test::process_temp_dir().path() / "pack.gdi").string();
  options.size_px = 16;
  const ImagePackSummary summary = pack_images(options);
  EXPECT_EQ(summary.images, 3);
  EXPECT_EQ(summary.upscaled, 0);  // shorter sides 40 and 30 px, all above 16
  EXPECT_EQ(summary.class_names, (std::vector<std::string>{"cat", "dog", "empty"}));
  const auto images = open_image_samples(options.out_path);
  ASSERT_EQ(images->num_samples(), 3);
  EXPECT_EQ(images->channels(), 3);
  EXPECT_EQ(images->height(), 16);
  EXPECT_EQ(images->width(), 16);
  EXPECT_EQ(images->num_classes(), 3);
  std::vector<uint8_t> pixels(3 * 16 * 16);
  int cats = 0, dogs = 0;
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t label = images->read_sample(i, pixels.data());
    auto at = [&](int c, int y, int x) { return pixels[(c * 16 + y) * 16 + x]; };
    if (label == 0) {  // 80x40 -> 32x16, centre 16 columns: red left half, blue right half
      ++cats;
      EXPECT_EQ(at(0, 8, 0), 255);
      EXPECT_EQ(at(2, 8, 0), 0);
      EXPECT_EQ(at(0, 8, 15), 0);
      EXPECT_EQ(at(2, 8, 15), 255);
    } else {
      ++dogs;
      EXPECT_EQ(label, 1);
      EXPECT_NEAR(at(1, 8, 8), 255, 2);  // JPEG is lossy
      EXPECT_NEAR(at(0, 8, 8), 0, 2);
    }
  }
  EXPECT_EQ(cats, 1);
  EXPECT_EQ(dogs, 2);
}

// Images smaller than --size are enlarged, and counted: the 30 x 60 dogs at 32 px, not the 80 x 40
// cat.
TEST(DataImages, SmallImagesAreEnlargedAndCounted) {
  ImagePackOptions options;
  options.folder = make_folder();
  options.out_path = (test::process_temp_dir().path() / "upscaled.gdi").string();
  options.size_px = 32;
  const ImagePackSummary summary = pack_images(options);
  EXPECT_EQ(summary.images, 3);
  EXPECT_EQ(summary.upscaled, 2);
  options.size_px = 48;
  EXPECT_EQ(pack_images(options).upscaled, 3);
}

TEST(DataImages, BadInputsAreOneLineErrors) {
  const std::string folder = make_folder();
  std::ofstream(fs::path(folder) / "dog" / "broken.png") << "not a png";
  ImagePackOptions options{folder, (test::process_temp_dir().path() / "broken.gdi").string(), 8, 0};
  try {
    pack_images(options);
    FAIL() << "a broken image was packed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.png: cannot decode"), std::string::npos)
        << e.what();
  }
  options.folder = folder + "/missing";
  EXPECT_THROW(pack_images(options), InputError);
}

TEST(DataImages, CorruptPackedFileNamesTheOffset) {
  ImagePackOptions options{
      make_folder(), (test::process_temp_dir().path() / "c.gdi").string(), 4, 0};
  pack_images(options);
  std::ifstream in(options.out_path, std::ios::binary);
  const std::string good{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto error_of = [&](const std::string& bytes) {
    std::ofstream(options.out_path, std::ios::binary) << bytes;
    try {
      open_image_samples(options.out_path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of(good), "");
  EXPECT_EQ(error_of(good.substr(0, 10)),
            options.out_path + ": offset 10: truncated: 10 bytes, the header alone is 32");
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_EQ(
      error_of(magic),
      options.out_path + ": offset 0: wrong magic; not a packed image file (expected GDIMAGE1)");
  std::string label = good;
  label[32] = 7;
  EXPECT_EQ(error_of(label), options.out_path + ": offset 32: label 7 outside [0, 3)");
  EXPECT_NE(error_of(good.substr(0, good.size() - 3)).find(options.out_path + ": offset"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudays::data
