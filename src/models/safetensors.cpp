// Safetensors reading and writing with nlohmann-json for the header and plain streams for the data.
#include "models/safetensors.h"

#include <ATen/ops/empty.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/error.h"
#include "common/json_fields.h"
#include "common/json_text.h"
#include "common/output_files.h"

namespace gpudays::models {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit
constexpr uint64_t kHeaderAlignment = 8;           // the reference pads headers to 8 bytes
constexpr const char* kMetadataKey = "__metadata__";

const std::vector<std::pair<std::string, at::ScalarType>>& dtype_table() {
  static const std::vector<std::pair<std::string, at::ScalarType>> table = {
      {"F64", at::kDouble},
      {"F32", at::kFloat},
      {"F16", at::kHalf},
      {"BF16", at::kBFloat16},
      {"I64", at::kLong},
      {"I32", at::kInt},
      {"I16", at::kShort},
      {"I8", at::kChar},
      {"U8", at::kByte},
      {"BOOL", at::kBool},
      {"F8_E4M3", at::kFloat8_e4m3fn},
      {"F8_E5M2", at::kFloat8_e5m2}};
  return table;
}

// The tensor's bytes, or nullopt when its element count passes int64 (LibTorch's numel) or its
// bytes pass uint64: such a shape once wrapped to a small size that matched its data_offsets.
std::optional<uint64_t> byte_size(const SafetensorsEntry& e) {
  uint64_t elements = 1;
  for (int64_t d : e.shape) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements) ||
        elements > static_cast<uint64_t>(INT64_MAX)) {
      return std::nullopt;
    }
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, c10::elementSize(e.dtype), &bytes)) return std::nullopt;
  return bytes;
}

// A JSON array of integers of 64 bits. A fraction or an exponent (6.4e20) is refused rather than
// converted: converting a double beyond the target type is undefined behaviour.
template <typename Fail>
std::vector<int64_t> integer_list(const nlohmann::json& j, const char* key, const Fail& fail) {
  if (!j.is_array()) throw fail(fmt::format("{} must be a list of integers", key));
  std::vector<int64_t> out;
  for (const auto& v : j) {
    const std::optional<int64_t> i = json_int64(v);
    if (!i) throw fail(fmt::format("{} holds {}, not an integer of 64 bits", key, json_text(v)));
    out.push_back(*i);
  }
  return out;
}

SafetensorsEntry parse_entry(const std::string& path,
                             const std::string& name,
                             const nlohmann::json& j,
                             uint64_t data_bytes) {
  auto fail = [&](const std::string& why) {
    return InputError(fmt::format("{}: tensor '{}': {}", path, name, why));
  };
  if (!j.is_object() || !j.contains("dtype") || !j.contains("shape") ||
      !j.contains("data_offsets")) {
    throw fail("needs dtype, shape and data_offsets");
  }
  SafetensorsEntry e;
  try {
    e.dtype = parse_safetensors_dtype(j.at("dtype").get<std::string>());
    e.shape = integer_list(j.at("shape"), "shape", fail);
    const std::vector<int64_t> offsets = integer_list(j.at("data_offsets"), "data_offsets", fail);
    if (offsets.size() != 2) throw fail("data_offsets must be [begin, end]");
    for (int64_t o : offsets) {
      if (o < 0) throw fail("data_offsets must not be negative");
    }
    e.begin = static_cast<uint64_t>(offsets[0]);
    e.end = static_cast<uint64_t>(offsets[1]);
  } catch (const nlohmann::json::exception& ex) {
    throw fail(ex.what());
  } catch (const InputError& ex) {
    throw fail(ex.what());
  }
  for (int64_t d : e.shape) {
    if (d < 0) throw fail("negative dimension");
  }
  if (e.end < e.begin || e.end > data_bytes) {
    throw fail(fmt::format(
        "data_offsets [{}, {}] outside the {}-byte data section", e.begin, e.end, data_bytes));
  }
  const std::optional<uint64_t> bytes = byte_size(e);
  if (!bytes) throw fail(fmt::format("shape [{}] is too large", fmt::join(e.shape, ", ")));
  if (e.end - e.begin != *bytes) {
    throw fail(fmt::format("{} bytes for a tensor of {} bytes", e.end - e.begin, *bytes));
  }
  return e;
}

void check_no_overlap(const std::string& path, const std::map<std::string, SafetensorsEntry>& m) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, e] : m) ranges.emplace_back(e.begin, e.end);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      throw InputError(fmt::format("{}: tensors overlap at byte {}", path, ranges[i].first));
    }
  }
}

}  // namespace

at::ScalarType parse_safetensors_dtype(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& [n, t] : dtype_table()) {
    if (n == name) return t;
    names.push_back(n);
  }
  throw InputError(fmt::format("unknown dtype '{}' (valid: {})", name, join_choices(names)));
}

std::string safetensors_dtype_name(at::ScalarType dtype) {
  for (const auto& [n, t] : dtype_table()) {
    if (t == dtype) return n;
  }
  throw InputError(fmt::format("dtype {} cannot be stored in safetensors", c10::toString(dtype)));
}

SafetensorsReader::SafetensorsReader(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open", path_));
  const uint64_t file_bytes = std::filesystem::file_size(path_);
  uint64_t header_bytes = 0;
  if (file_bytes < 8 || !in.read(reinterpret_cast<char*>(&header_bytes), 8)) {
    throw InputError(fmt::format("{}: too short for a safetensors file", path_));
  }
  if (header_bytes > kMaxHeaderBytes || 8 + header_bytes > file_bytes) {
    throw InputError(fmt::format(
        "{}: header length {} does not fit the {}-byte file", path_, header_bytes, file_bytes));
  }
  std::string header(header_bytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_bytes));
  data_start_ = 8 + header_bytes;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& ex) {
    throw InputError(fmt::format("{}: header is not JSON: {}", path_, ex.what()));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: header is not a JSON object", path_));
  for (const auto& [name, value] : j.items()) {
    if (name == kMetadataKey) {
      for (const auto& [k, v] : value.items())
        metadata_[k] = v.is_string() ? v.get<std::string>() : json_text(v);
      continue;
    }
    entries_[name] = parse_entry(path_, name, value, file_bytes - data_start_);
  }
  check_no_overlap(path_, entries_);
}

at::Tensor SafetensorsReader::read(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw InputError(fmt::format("{}: no tensor '{}'", path_, name));
  const SafetensorsEntry& e = it->second;
  at::Tensor t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype));
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(data_start_ + e.begin));
  in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(e.end - e.begin));
  if (!in) throw InputError(fmt::format("{}: cannot read tensor '{}'", path_, name));
  return t;
}

void write_safetensors(const std::string& path,
                       const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  nlohmann::json meta = {{"format", "pt"}};
  for (const auto& [k, v] : metadata) meta[k] = v;
  header[kMetadataKey] = meta;
  std::vector<at::Tensor> data;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == kMetadataKey || header.contains(name)) {
      throw InputError(fmt::format("{}: duplicate or reserved tensor name '{}'", path, name));
    }
    at::Tensor t = tensor.detach().to(at::kCPU).contiguous();
    const uint64_t bytes = t.numel() * t.element_size();
    header[name] = {{"dtype", safetensors_dtype_name(t.scalar_type())},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(std::move(t));
  }
  std::string text = json_text(header);
  text.append((kHeaderAlignment - (8 + text.size()) % kHeaderAlignment) % kHeaderAlignment, ' ');
  // Whole or not at all; a failed write (a full disk) is an IoError, not bad input.
  AtomicFile out(path);
  const uint64_t header_bytes = text.size();
  out.write(&header_bytes, 8);
  out.write(text.data(), text.size());
  for (const at::Tensor& t : data) {
    out.write(t.const_data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
  }
  out.commit();
}

}  // namespace gpudays::models
