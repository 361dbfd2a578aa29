// MappedFile: open + fstat + mmap (read-only, shared), unmapped in the destructor.
#include "data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays::data {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw InputError(fmt::format("cannot read {}: not a regular file", path));
  }
  size_bytes_ = static_cast<int64_t>(info.st_size);
  if (size_bytes_ > 0) {
    void* mapped = ::mmap(nullptr, static_cast<size_t>(size_bytes_), PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw InputError(fmt::format("cannot map {}: {}", path, std::strerror(err)));
    }
    data_ = static_cast<const uint8_t*>(mapped);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_bytes_));
}

}  // namespace gpudays::data
