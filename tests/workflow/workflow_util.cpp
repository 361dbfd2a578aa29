// The workflow suite's helpers: snapshots, a plain safetensors reader and writer, error lines.
#include "workflow/workflow_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "trainer/checkpoint_files.h"

namespace gpudays::test {
namespace fs = std::filesystem;

namespace {

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == ".gpudays-train.lock") continue;
    files[fs::relative(e.path(), dir).string()] = contents(e.path());
  }
  return files;
}

StoredTensor* StoredSafetensors::find(const std::string& name) {
  for (auto& [n, t] : tensors) {
    if (n == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

void StoredSafetensors::erase(const std::string& name) {
  std::erase_if(tensors, [&](const auto& entry) { return entry.first == name; });
}

StoredSafetensors read_stored(const std::string& path) {
  const std::string bytes = contents(path);
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes.data(), 8);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_bytes));
  const std::string data = bytes.substr(8 + header_bytes);
  StoredSafetensors file;
  std::vector<std::pair<uint64_t, std::string>> by_offset;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : entry.items()) file.metadata[k] = v.get<std::string>();
      continue;
    }
    by_offset.emplace_back(entry["data_offsets"][0].get<uint64_t>(), name);
  }
  std::sort(by_offset.begin(), by_offset.end());
  for (const auto& [offset, name] : by_offset) {
    const nlohmann::json& entry = header[name];
    const uint64_t end = entry["data_offsets"][1].get<uint64_t>();
    file.tensors.emplace_back(name,
                              StoredTensor{entry["dtype"].get<std::string>(),
                                           entry["shape"].get<std::vector<int64_t>>(),
                                           data.substr(offset, end - offset)});
  }
  return file;
}

void write_stored(const std::string& path, const StoredSafetensors& file) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = file.metadata;
  std::string data;
  for (const auto& [name, t] : file.tensors) {
    header[name] = {{"dtype", t.dtype},
                    {"shape", t.shape},
                    {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  const std::string text = header.dump();
  const uint64_t header_bytes = text.size();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&header_bytes), 8);
  out << text << data;
}

void tamper(const fs::path& step_dir,
            const std::string& file,
            const std::function<void(StoredSafetensors&)>& edit) {
  const std::string path = (step_dir / file).string();
  StoredSafetensors stored = read_stored(path);
  edit(stored);
  write_stored(path, stored);
  edit_manifest(step_dir,
                [&](nlohmann::json& manifest) { manifest["files"][file] = file_checksum(path); });
}

void edit_manifest(const fs::path& step_dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json manifest = nlohmann::json::parse(contents(step_dir / "manifest.json"));
  edit(manifest);
  std::ofstream(step_dir / "manifest.json", std::ios::trunc) << manifest.dump();
}

bool gpudays_trains() {
  return std::system((std::string(GPUDAYS_BINARY) + " train --help >/dev/null 2>&1").c_str()) == 0;
}

void expect_no_internal_error(const std::string& err) {
  for (const char* sign : {"internal error", "terminate called", "frame #", "Exception raised"}) {
    EXPECT_EQ(err.find(sign), std::string::npos) << "'" << sign << "' in: " << err;
  }
}

std::string expect_one_error_line(const std::string& err, const std::vector<std::string>& parts) {
  expect_no_internal_error(err);
  std::vector<std::string> errors;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("gpudays: error: ", 0) == 0) errors.push_back(line);
  }
  EXPECT_EQ(errors.size(), 1u) << err;
  if (errors.empty()) return "";
  for (const std::string& part : parts) {
    EXPECT_NE(errors[0].find(part), std::string::npos) << "'" << part << "' not in: " << errors[0];
  }
  return errors[0];
}

}  // namespace gpudays::test
