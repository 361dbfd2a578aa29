// Input files read whole (TOML, tokenizer.json, JSON caches, jobs.jsonl): bounded before they are
// read, so that a FIFO does not block the command, a device such as /dev/zero does not fill
// memory, and an oversized file is one line rather than an allocation failure.
#pragma once

#include <cstdint>
#include <string>

namespace gpudays {

// InputError when `path` exists and is neither a regular file nor a directory (a FIFO, a device,
// a socket), or is a regular file of more than `max_bytes`: "{path}: a file of 9.5 MiB;
// {kind} are at most 4 MiB". `kind` names the files in the plural ("gpudays' TOML files"). A
// missing file or a directory passes: the caller's own open says what is wrong with it.
void check_input_file(const std::string& path, std::uintmax_t max_bytes, const std::string& kind);

}  // namespace gpudays
