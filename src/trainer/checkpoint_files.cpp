// Checkpoint directories: staging, checksums, atomic commit, validation and pruning.
#include "trainer/checkpoint_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <ostream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_fields.h"
#include "common/json_text.h"
#include "common/output_files.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kStepPrefix = "step-";
// A manifest lists a few files and the slot layout: a few hundred kB for the largest models.
constexpr uintmax_t kMaxManifestBytes = uintmax_t{64} << 20;

// N of a folder named step-N, where N is written as checkpoint_dir writes it (no sign, no leading
// zero, at most 2^63 - 1); nullopt for any other name.
std::optional<int64_t> step_of_folder(const std::string& name) {
  const std::string digits = name.substr(std::strlen(kStepPrefix));
  int64_t step = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || end != digits.data() + digits.size() || step < 0 ||
      std::to_string(step) != digits) {
    return std::nullopt;
  }
  return step;
}

// A manifest's file name: a plain name inside the checkpoint directory.
void check_file_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name == kManifest) {
    throw InputError(fmt::format("manifest.json names the file '{}'", name));
  }
}

// The step a directory's name gives it, or nullopt for a directory not named step-N.
std::optional<int64_t> step_of_dir(const std::string& dir) {
  const std::string name = fs::path(dir).lexically_normal().filename().string();
  if (name.rfind(kStepPrefix, 0) != 0) return std::nullopt;
  return step_of_folder(name);
}

struct Manifest {
  FoundCheckpoint found;
  std::vector<std::pair<std::string, std::string>> files;  // name, checksum
};

// Reads and checks dir/manifest.json; every error names manifest.json (the caller adds `dir`).
Manifest parse_manifest(const std::string& dir) {
  const std::string manifest_path = (fs::path(dir) / kManifest).string();
  std::error_code ec;
  if (!fs::is_regular_file(manifest_path, ec)) throw InputError("no manifest.json");
  if (fs::file_size(manifest_path, ec) > kMaxManifestBytes) {
    throw InputError(fmt::format("manifest.json is over {} bytes", kMaxManifestBytes));
  }
  std::ifstream in(manifest_path);
  if (!in) throw InputError("no manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  const int64_t step = json_int64_field(manifest, "step", std::nullopt, "manifest.json");
  if (step < 0) throw InputError(fmt::format("manifest.json: step {} is negative", step));
  if (const std::optional<int64_t> named = step_of_dir(dir); named && *named != step) {
    throw InputError(fmt::format("manifest.json is of step {}, not {}", step, *named));
  }
  if (!manifest.contains("state")) throw InputError("manifest.json has no state");
  Manifest m{{dir, step, parse_run_state(manifest.at("state"), "manifest.json")}, {}};
  if (m.found.state.step != step) {
    throw InputError(
        fmt::format("manifest.json: state.step {} is not its step {}", m.found.state.step, step));
  }
  if (!manifest.contains("files") || !manifest.at("files").is_object()) {
    throw InputError("manifest.json has no files object");
  }
  for (const auto& [name, checksum] : manifest.at("files").items()) {
    check_file_name(name);
    if (!checksum.is_string()) {
      throw InputError(fmt::format("manifest.json: the checksum of {} is not a string", name));
    }
    m.files.emplace_back(name, checksum.get<std::string>());
  }
  return m;
}

}  // namespace

std::vector<int64_t> committed_steps(const std::string& checkpoints_dir,
                                     std::vector<std::string>* junk) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(checkpoints_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kStepPrefix, 0) != 0) continue;  // staging (.step-N.tmp) and other files
    const std::optional<int64_t> step = step_of_folder(name);
    if (step && e.is_directory(ec)) {
      steps.push_back(*step);
    } else if (junk != nullptr) {
      junk->push_back(name);
    }
  }
  std::sort(steps.rbegin(), steps.rend());
  if (junk != nullptr) std::sort(junk->begin(), junk->end());
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

void commit_checkpoint(const std::string& checkpoints_dir, int64_t step, const RunState& state) {
  const std::string staging = staging_checkpoint_dir(checkpoints_dir, step);
  nlohmann::json files = nlohmann::json::object();
  for (const fs::directory_entry& e : fs::directory_iterator(staging)) {
    const std::string path = e.path().string();
    fsync_path(path);
    files[e.path().filename().string()] = file_checksum(path);
  }
  const nlohmann::json manifest = {
      {"step", step}, {"files", files}, {"state", run_state_json(state)}};
  write_file_atomically((fs::path(staging) / kManifest).string(), json_text(manifest, 2) + "\n");
  fsync_path(staging);
  const std::string final_dir = checkpoint_dir(checkpoints_dir, step);
  std::error_code ec;
  fs::remove_all(final_dir, ec);
  fs::rename(staging, final_dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot rename into place ({})", final_dir, ec.message()));
  fsync_path(checkpoints_dir);
}

FoundCheckpoint read_checkpoint(const std::string& dir) {
  try {
    Manifest m = parse_manifest(dir);
    for (const auto& [name, checksum] : m.files) {
      const std::string path = (fs::path(dir) / name).string();
      if (!fs::is_regular_file(path)) throw InputError(fmt::format("{} is missing", name));
      if (file_checksum(path) != checksum) {
        throw InputError(fmt::format("{} fails its checksum (truncated or corrupted)", name));
      }
    }
    return std::move(m.found);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed manifest.json ({})", dir, one_line(e)));
  } catch (const std::exception& e) {  // InputError, and IoError from a file that cannot be read
    throw InputError(fmt::format("{}: {}", dir, e.what()));
  }
}

std::optional<FoundCheckpoint> latest_checkpoint(const std::string& checkpoints_dir,
                                                 std::ostream& messages) {
  std::vector<std::string> junk;
  const std::vector<int64_t> steps = committed_steps(checkpoints_dir, &junk);
  for (const std::string& name : junk) {
    messages << fmt::format(
        "gpudays: warning: {}: not a checkpoint (a directory step-N, N a step from 0 to 2^63 - 1); "
        "skipped\n",
        (fs::path(checkpoints_dir) / name).string());
  }
  for (int64_t step : steps) {
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
