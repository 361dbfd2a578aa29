// GPU catalog file parsing and validation. Every table carries a `source`; the loader keeps them.
#include "catalog/gpu_loader.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "catalog/host_cpu.h"
#include "catalog/toml_fields.h"
#include "common/error.h"

namespace gpudays {
namespace {

// The smallest figures a file may give: a GPU of 1 GFLOP/s or 1 MB/s is far below any real one,
// and a positive figure closer to 0 (1e-300) made step times and training days infinite.
constexpr double kMinPeakTflops = 1e-3;
constexpr double kMinGbPerS = 1e-3;

// The generations the planner's figures and error bands know (error_band.h groups by them).
const std::vector<std::string> kArchitectures = {
    "volta", "turing", "ampere", "ada", "hopper", "blackwell"};
// The links `plan` names ("collectives over nvlink3") and models: NVLink generations (the planner
// takes any non-PCIe link at its NVLink efficiency) and PCIe generations.
const std::vector<std::string> kGpuLinks = {
    "nvlink1", "nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5", "pcie6"};
const std::vector<std::string> kHostLinks = {"pcie3", "pcie4", "pcie5", "pcie6"};
// The most memory one GPU may have: 1 TiB, over three times the largest of 2025 (288 GB); a byte
// count past it is a unit mistake (and past 2^53 no longer exact as the planner's double).
constexpr int64_t kMaxMemoryBytes = int64_t{1} << 40;
// The dearest GPU lists at some 10^4 USD, a whole 8-GPU server at some 10^5: 10^7 USD per GPU (and
// 10^4 USD per GPU-hour) catch a price in cents or a stray exponent, which overflowed the costs.
constexpr double kMaxPurchaseUsd = 1e7;
constexpr double kMaxCloudUsdPerGpuHour = 1e4;
// Ampere (compute capability 8.0) brought bf16 and TF32 tensor cores; every later GPU has both.
constexpr double kAmpereComputeCapability = 8.0;

std::string one_of(const TomlFields& t, const char* key, const std::vector<std::string>& valid) {
  std::string value = t.get_string(key);
  if (std::find(valid.begin(), valid.end(), value) == valid.end()) {
    t.fail(key, fmt::format("'{}' is not one of {}", value, join_choices(valid)));
  }
  return value;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A name or alias others type, looked up ignoring case: not empty (an empty alias matched
// `--gpu ''`), not "cpu" (the host CPU's name in measurements and `trial --probe-device`), and
// each alias once (one may repeat the name: the reference system's "a40" is the catalog's).
void require_names(const TomlFields& t, const GpuSpec& g) {
  if (g.name.empty()) t.fail("name", "must not be empty");
  if (g.display_name.empty()) t.fail("display_name", "must not be empty");
  if (lower(g.name) == kHostCpuName) t.fail("name", "'cpu' names the host CPU; choose another");
  std::vector<std::string> seen;
  for (const std::string& alias : g.aliases) {
    if (alias.empty()) t.fail("aliases", "an empty alias");
    if (lower(alias) == kHostCpuName) {
      t.fail("aliases", fmt::format("'{}' names the host CPU; choose another", alias));
    }
    if (std::find(seen.begin(), seen.end(), lower(alias)) != seen.end()) {
      t.fail("aliases", fmt::format("'{}' is given twice (names ignore case)", alias));
    }
    seen.push_back(lower(alias));
  }
}

// bf16 and TF32 tensor cores come with Ampere: a peak of 0 (none) on a newer GPU, or one on an
// older, contradicts its compute capability (and would be blamed on every case that uses it).
void require_dtypes_of_generation(const TomlFields& t, const GpuSpec& g) {
  const bool ampere_or_newer = g.compute_capability >= kAmpereComputeCapability;
  for (const auto& [key, peak] :
       {std::pair{"bf16", g.peak_bf16_tflops}, {"tf32", g.peak_tf32_tflops}}) {
    if (ampere_or_newer == (peak > 0.0)) continue;
    t.fail(key,
           ampere_or_newer
               ? fmt::format("missing or 0, but compute capability {} (Ampere or newer) has {}",
                             g.compute_capability,
                             key)
               : fmt::format("{}, but compute capability {} (before Ampere) has no {}",
                             peak,
                             g.compute_capability,
                             key));
  }
}

void require_bandwidth(const TomlFields& t, const char* key, double v) {
  if (v < kMinGbPerS) t.fail(key, fmt::format("must be at least {} GB/s, is {}", kMinGbPerS, v));
}

void read_peak(const TomlFields& t, GpuSpec& g) {
  g.peak_fp32_tflops = t.get_double("fp32");
  g.peak_tf32_tflops = t.get_double_or("tf32", 0.0);
  g.peak_fp16_tflops = t.get_double("fp16");
  g.peak_bf16_tflops = t.get_double_or("bf16", 0.0);
  // The largest dense peak of any GPU is a few thousand TFLOP/s; 1e5 catches unit mistakes.
  // An optional peak may be 0: the dtype is unsupported.
  const auto check = [&t](double v, const char* key, bool required) {
    if ((required || v != 0.0) && (v < kMinPeakTflops || v > 1e5)) {
      t.fail(key,
             fmt::format("must be {}in [{}, 100000] TFLOP/s, is {}",
                         required ? "" : "0 or ",
                         kMinPeakTflops,
                         v));
    }
  };
  check(g.peak_fp32_tflops, "fp32", true);
  check(g.peak_tf32_tflops, "tf32", false);
  check(g.peak_fp16_tflops, "fp16", true);
  check(g.peak_bf16_tflops, "bf16", false);
}

void read_ceiling(const TomlFields& t, GpuSpec& g) {
  const auto check = [&t](const char* key, double fraction) {
    if (fraction <= 0.0 || fraction > kMaxMatmulCeilingFraction) {
      t.fail(key, fmt::format("must be in (0, {:g}]", kMaxMatmulCeilingFraction));
    }
  };
  g.matmul_ceiling_fraction = t.get_double("fraction_of_peak");
  g.matmul_ceiling_measured = t.get_bool_or("measured", false);
  check("fraction_of_peak", g.matmul_ceiling_fraction);
  if (t.has("fp32_fraction_of_peak")) {
    g.fp32_matmul_ceiling_fraction = t.get_double("fp32_fraction_of_peak");
    check("fp32_fraction_of_peak", g.fp32_matmul_ceiling_fraction);
  }
}

void read_memory(const TomlFields& t, GpuSpec& g) {
  g.memory_bytes = t.get_int("bytes");
  g.memory_bandwidth_gb_per_s = t.get_double("bandwidth_gb_per_s");
  if (g.memory_bytes <= 0 || g.memory_bytes > kMaxMemoryBytes) {
    t.fail("bytes",
           fmt::format("must be in [1, {}] (1 TiB), is {}", kMaxMemoryBytes, g.memory_bytes));
  }
  require_bandwidth(t, "bandwidth_gb_per_s", g.memory_bandwidth_gb_per_s);
}

void read_links(const TomlFields& t, GpuSpec& g) {
  g.gpu_link = one_of(t, "gpu_link", kGpuLinks);
  g.gpu_link_gb_per_s = t.get_double("gpu_link_gb_per_s");
  g.pair_bridge_gb_per_s = t.get_double_or("pair_bridge_gb_per_s", 0.0);
  g.host_link = one_of(t, "host_link", kHostLinks);
  g.host_link_gb_per_s = t.get_double("host_link_gb_per_s");
  require_bandwidth(t, "gpu_link_gb_per_s", g.gpu_link_gb_per_s);
  require_bandwidth(t, "host_link_gb_per_s", g.host_link_gb_per_s);
  if (g.pair_bridge_gb_per_s != 0.0) {  // 0: no bridge
    require_bandwidth(t, "pair_bridge_gb_per_s", g.pair_bridge_gb_per_s);
  }
  // No bridge unless the file says pairs have one: most multi-GPU boxes of PCIe cards have none.
  g.pair_bridge = t.get_bool_or("pair_bridge", false);
  if (g.pair_bridge && g.pair_bridge_gb_per_s == 0.0) {
    t.fail("pair_bridge", "true, but the card takes no bridge: give pair_bridge_gb_per_s");
  }
  g.peer_to_peer = t.get_bool_or("peer_to_peer", true);
}

void read_price(const TomlFields& t, GpuSpec& g) {
  g.purchase_usd = t.get_double("purchase_usd");
  g.purchase_date = t.get_string("purchase_date");
  g.cloud_usd_per_gpu_hour = t.get_double_or("cloud_usd_per_gpu_hour", 0.0);
  g.cloud_date = t.get_string_or("cloud_date", "");
  if (t.has("cloud_source")) g.sources["cloud"] = t.get_string("cloud_source");
  if (g.purchase_usd < 0.0 || g.purchase_usd > kMaxPurchaseUsd) {
    t.fail("purchase_usd",
           fmt::format("must be in [0, {:g}], is {}", kMaxPurchaseUsd, g.purchase_usd));
  }
  if (g.cloud_usd_per_gpu_hour < 0.0 || g.cloud_usd_per_gpu_hour > kMaxCloudUsdPerGpuHour) {
    t.fail("cloud_usd_per_gpu_hour",
           fmt::format("must be in [0, {:g}] (0: unknown), is {}",
                       kMaxCloudUsdPerGpuHour,
                       g.cloud_usd_per_gpu_hour));
  }
}

// Reads table `key` with `reader`, records its source and rejects unknown keys.
template <typename Reader>
void read_table(const TomlFields& root, const char* key, GpuSpec& g, Reader reader) {
  TomlFields t = root.table(key);
  reader(t, g);
  g.sources[key] = t.get_string("source");
  t.check_all_used();
}

}  // namespace

LinkSettings read_link_settings(const TomlFields& t) {
  return {t.get_optional_bool("pair_bridge"), t.get_optional_bool("peer_to_peer")};
}

void check_links_possible(const GpuSpec& gpu, const LinkSettings& links) {
  if (links.pair_bridge.value_or(false) && gpu.pair_bridge_gb_per_s <= 0.0) {
    throw InputError(fmt::format(
        "an NVLink bridge is asked for (--pair-bridge on, or a pair_bridge = true), but the {} "
        "takes none ({} gives no pair_bridge_gb_per_s)",
        gpu.name,
        gpu.source_path.empty() ? "its GPU file" : gpu.source_path));
  }
}

GpuSpec load_gpu_file(const std::string& path) {
  TomlFields root = TomlFields::parse_file(path);
  GpuSpec g;
  g.source_path = path;
  g.name = root.get_name("name");
  g.display_name = root.get_name("display_name");
  g.aliases = root.get_name_array_or("aliases");
  require_names(root, g);
  g.architecture = one_of(root, "architecture", kArchitectures);
  g.compute_capability = root.get_double("compute_capability");
  if (g.compute_capability < 0.0 || g.compute_capability > 100.0) {
    root.fail("compute_capability",
              fmt::format("must be in [0, 100], is {}", g.compute_capability));
  }
  read_table(root, "peak_tflops", g, [](const TomlFields& t, GpuSpec& gpu) {
    read_peak(t, gpu);
    require_dtypes_of_generation(t, gpu);
  });
  read_table(root, "matmul_ceiling", g, read_ceiling);
  read_table(root, "memory", g, read_memory);
  read_table(root, "links", g, read_links);
  read_table(root, "power", g, [](const TomlFields& t, GpuSpec& gpu) {
    gpu.tdp_w = t.get_double("tdp_w");
    if (gpu.tdp_w <= 0.0 || gpu.tdp_w > 1e5) {
      t.fail("tdp_w", fmt::format("must be in (0, 100000] W, is {}", gpu.tdp_w));
    }
  });
  read_table(root, "price", g, read_price);
  root.check_all_used();
  return g;
}

}  // namespace gpudays
