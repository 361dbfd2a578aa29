// Reader and writer for the safetensors format (huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON ({name: {dtype, shape, data_offsets}}, optional __metadata__),
// then the raw little-endian tensor data. Which tensors a model needs is checkpoint.h's business.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpudays::models {

struct SafetensorsEntry {
  at::ScalarType dtype = at::kFloat;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets into the data section
  uint64_t end = 0;
};

// Opens a file and validates its header (dtypes, shapes against byte sizes, offsets in range and
// not overlapping). Errors name the file and the offending tensor. Tensors are read one at a time.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(std::string path);

  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  at::Tensor read(const std::string& name) const;  // a new contiguous CPU tensor

 private:
  std::string path_;
  uint64_t data_start_ = 0;
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Writes tensors (any device; copied to CPU) in the given order with {"format": "pt"} metadata,
// which transformers expects, plus `metadata`; whole or not at all (common/output_files.h). A
// duplicate name is an InputError; a failed write an IoError.
void write_safetensors(const std::string& path,
                       const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// "F32", "BF16", ... <-> ScalarType; unknown names throw naming the valid ones.
at::ScalarType parse_safetensors_dtype(const std::string& name);
std::string safetensors_dtype_name(at::ScalarType dtype);

}  // namespace gpudays::models
