// Helpers of the workflow suite (tests/workflow, docs/testing.md): what a directory holds, byte
// for byte, to prove a refused command lost nothing; a safetensors file edited as a careless tool
// would (its checksum in the manifest recomputed, so that only its contents can tell); and the
// one-line error every refusal must end in. Torch-free: the suite runs the real gpudays binary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudays::test {

// Every regular file under `dir` (relative path -> contents), the run directory's lock left out.
std::map<std::string, std::string> snapshot(const std::filesystem::path& dir);

// A safetensors file as stored: its metadata and its tensors in file order.
struct StoredTensor {
  std::string dtype;  // "F32", "U8", ...
  std::vector<int64_t> shape;
  std::string bytes;
};
struct StoredSafetensors {
  std::map<std::string, std::string> metadata;
  std::vector<std::pair<std::string, StoredTensor>> tensors;
  StoredTensor* find(const std::string& name);
  void erase(const std::string& name);
};
StoredSafetensors read_stored(const std::string& path);
void write_stored(const std::string& path, const StoredSafetensors& file);

// Rewrites step_dir/file through `edit`, then its checksum in step_dir/manifest.json.
void tamper(const std::filesystem::path& step_dir,
            const std::string& file,
            const std::function<void(StoredSafetensors&)>& edit);
// Rewrites step_dir/manifest.json through `edit`.
void edit_manifest(const std::filesystem::path& step_dir,
                   const std::function<void(nlohmann::json&)>& edit);

// stderr holds exactly one line "gpudays: error: ..." containing each of `parts`, and nothing of
// an internal error or a stack trace. Returns that line ("" when there is none).
std::string expect_one_error_line(const std::string& err, const std::vector<std::string>& parts);
// Whether this gpudays has `train` (a build with LibTorch).
bool gpudays_trains();
// No internal error, C++ exception or stack trace anywhere in `err`.
void expect_no_internal_error(const std::string& err);

}  // namespace gpudays::test
