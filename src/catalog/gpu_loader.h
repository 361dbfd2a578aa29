// Reads a GPU catalog file (configs/gpus/<name>.toml; schema in docs/catalog.md) into a GpuSpec.
#pragma once

#include <string>

#include "catalog/gpu_spec.h"

namespace gpudays {

class TomlFields;

GpuSpec load_gpu_file(const std::string& path);

// The keys `pair_bridge` and `peer_to_peer` of a table that overrides a GPU file's links (a cluster
// file's partition, a published case); absent keys stay unset.
LinkSettings read_link_settings(const TomlFields& t);

// Throws InputError when `links` asks for an NVLink bridge on a card that takes none.
void check_links_possible(const GpuSpec& gpu, const LinkSettings& links);

}  // namespace gpudays
