// A read-only, memory-mapped file (RAII). The readers of the token and image formats map their
// files with it; the kernel pages them in on demand, so a dataset larger than memory is fine.
#pragma once

#include <cstdint>
#include <string>

namespace gpudays::data {

class MappedFile {
 public:
  // Throws InputError naming `path` when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  int64_t size_bytes() const { return size_bytes_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  int64_t size_bytes_ = 0;
};

}  // namespace gpudays::data
