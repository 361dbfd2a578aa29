// check_input_file: a FIFO, a device and an oversized file are refused before they are opened
// (reading them would block, never end, or fill memory); a regular file within the bound, a missing
// file and a directory pass to the caller's own open.
#include "common/input_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "process_dir.h"

namespace gpudays {
namespace {

std::string refusal(const std::string& path, std::uintmax_t max_bytes) {
  try {
    check_input_file(path, max_bytes, "test files");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(InputFiles, SpecialAndOversizedFilesAreRefusedBeforeTheyAreOpened) {
  const std::filesystem::path dir = test::process_temp_dir().fresh_dir("input-files");
  const std::string fifo = (dir / "model.toml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refusal(fifo, 1 << 20),
            fifo + " is a FIFO (reading it waits for a writer); give a regular file");
  const std::string zero = (dir / "zero.json").string();
  std::filesystem::create_symlink("/dev/zero", zero);
  EXPECT_EQ(refusal(zero, 1 << 20), zero + " is a device; give a regular file");
  const std::string big = (dir / "big.json").string();
  std::ofstream(big) << std::string((3 << 20) / 2, 'x');
  EXPECT_EQ(refusal(big, 1 << 20), big + ": a file of 1.5 MiB; test files are at most 1 MiB");
  EXPECT_EQ(refusal(big, 2 << 20), "");
  EXPECT_EQ(refusal((dir / "missing.json").string(), 1), "");
  EXPECT_EQ(refusal(dir.string(), 1), "");
}

}  // namespace
}  // namespace gpudays
