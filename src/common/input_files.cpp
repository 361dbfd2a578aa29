// check_input_file: what a path is and how large, before a reader opens it.
#include "common/input_files.h"

#include <filesystem>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

const char* special_kind(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::fifo:
      return "a FIFO (reading it waits for a writer)";
    case std::filesystem::file_type::character:
    case std::filesystem::file_type::block:
      return "a device";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

std::string mib(double bytes) {
  return fmt::format("{:.1f}", bytes / (1 << 20));
}

}  // namespace

void check_input_file(const std::string& path, std::uintmax_t max_bytes, const std::string& kind) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows links
  if (ec || status.type() == fs::file_type::not_found || fs::is_directory(status)) return;
  if (!fs::is_regular_file(status)) {
    throw InputError(
        fmt::format("{} is {}; give a regular file", path, special_kind(status.type())));
  }
  const std::uintmax_t bytes = fs::file_size(path, ec);
  if (!ec && bytes > max_bytes) {
    throw InputError(fmt::format("{}: a file of {} MiB; {} are at most {} MiB",
                                 path,
                                 mib(static_cast<double>(bytes)),
                                 kind,
                                 fmt::format("{:g}", static_cast<double>(max_bytes) / (1 << 20))));
  }
}

}  // namespace gpudays
