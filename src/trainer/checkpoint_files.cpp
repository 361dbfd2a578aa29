// Checkpoint directories: staging, checksums, atomic commit, validation and pruning.
#include "trainer/checkpoint_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_fields.h"
#include "common/output_files.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kStepPrefix = "step-";

}  // namespace

std::vector<int64_t> committed_steps(const std::string& checkpoints_dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(checkpoints_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind(kStepPrefix, 0) != 0) continue;
    const std::string digits = name.substr(std::strlen(kStepPrefix));
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    steps.push_back(std::stoll(digits));
  }
  std::sort(steps.rbegin(), steps.rend());
  return steps;
}

std::string file_checksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot read", path));
  uint64_t hash = 14695981039346656037ULL;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      hash = (hash ^ static_cast<unsigned char>(buffer[static_cast<size_t>(i)])) * 1099511628211ULL;
    }
  }
  return fmt::format("{:016x}", hash);
}

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw IoError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw IoError(fmt::format("{}: fsync failed ({})", path, std::strerror(err)));
}

std::string checkpoint_dir(const std::string& checkpoints_dir, int64_t step) {
  return (fs::path(checkpoints_dir) / fmt::format("{}{}", kStepPrefix, step)).string();
}

std::string staging_checkpoint_dir(const std::string& checkpoints_dir, int64_t step) {
  return (fs::path(checkpoints_dir) / fmt::format(".{}{}.tmp", kStepPrefix, step)).string();
}

void begin_checkpoint(const std::string& checkpoints_dir, int64_t step) {
  const std::string staging = staging_checkpoint_dir(checkpoints_dir, step);
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create ({})", staging, ec.message()));
}

void commit_checkpoint(const std::string& checkpoints_dir,
                       int64_t step,
                       const nlohmann::json& state) {
  const std::string staging = staging_checkpoint_dir(checkpoints_dir, step);
  nlohmann::json files = nlohmann::json::object();
  for (const fs::directory_entry& e : fs::directory_iterator(staging)) {
    const std::string path = e.path().string();
    fsync_path(path);
    files[e.path().filename().string()] = file_checksum(path);
  }
  const nlohmann::json manifest = {{"step", step}, {"files", files}, {"state", state}};
  write_file_atomically((fs::path(staging) / kManifest).string(), manifest.dump(2) + "\n");
  fsync_path(staging);
  const std::string final_dir = checkpoint_dir(checkpoints_dir, step);
  std::error_code ec;
  fs::remove_all(final_dir, ec);
  fs::rename(staging, final_dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot rename into place ({})", final_dir, ec.message()));
  fsync_path(checkpoints_dir);
}

FoundCheckpoint read_checkpoint(const std::string& dir) {
  const std::string manifest_path = (fs::path(dir) / kManifest).string();
  std::ifstream in(manifest_path);
  if (!in) throw InputError(fmt::format("{}: no manifest.json", dir));
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(in);
    FoundCheckpoint found{
        dir, json_int64_field(manifest, "step", std::nullopt, manifest_path), manifest.at("state")};
    for (const auto& [name, checksum] : manifest.at("files").items()) {
      const std::string path = (fs::path(dir) / name).string();
      if (!fs::exists(path)) throw InputError(fmt::format("{} is missing", name));
      if (file_checksum(path) != checksum.get<std::string>()) {
        throw InputError(fmt::format("{} fails its checksum (truncated or corrupted)", name));
      }
    }
    return found;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed manifest ({})", dir, e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", dir, e.what()));
  }
}

std::optional<FoundCheckpoint> latest_checkpoint(const std::string& checkpoints_dir,
                                                 std::ostream& messages) {
  for (int64_t step : committed_steps(checkpoints_dir)) {
    try {
      return read_checkpoint(checkpoint_dir(checkpoints_dir, step));
    } catch (const std::exception& e) {
      messages << "gpudays: checkpoint skipped: " << e.what() << "; trying the previous one\n";
    }
  }
  return std::nullopt;
}

void test_hook_stall_in_checkpoint(int64_t step) {
  const char* value = std::getenv("GPUDAYS_TEST_STALL_CHECKPOINT");
  if (value == nullptr || std::to_string(step) != value) return;
  std::cerr << fmt::format("gpudays: test hook: stalled writing checkpoint step-{}", step)
            << std::endl;
  std::this_thread::sleep_for(std::chrono::seconds(600));
}

void prune_checkpoints(const std::string& checkpoints_dir, int64_t keep) {
  const std::vector<int64_t> steps = committed_steps(checkpoints_dir);
  std::error_code ec;
  for (size_t i = static_cast<size_t>(std::max<int64_t>(keep, 1)); i < steps.size(); ++i) {
    fs::remove_all(checkpoint_dir(checkpoints_dir, steps[i]), ec);
  }
  for (const fs::directory_entry& e : fs::directory_iterator(checkpoints_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".step-", 0) == 0) fs::remove_all(e.path(), ec);
  }
}

}  // namespace gpudays
