// A device: a catalog GPU (dense peak throughput per dtype, memory, links, power and prices, each
// figure with its source, kept in `sources` by TOML table; parsing lives in gpu_loader.cpp), or the
// host CPU, a device kind of its own built from a measurement (host_cpu.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpudays {

// What differs for the host CPU (host_cpu.h): no CUDA context, NCCL buffers or cuBLAS workspace in
// its memory (plan/memory_model.cpp), no CUDA graphs (plan/device_model.cpp), bf16 by autocast
// whatever its compute capability (0), no prices; its peaks and ceiling are measured, not sourced.
enum class DeviceKind { kGpu, kCpu };

// The most a measured matmul ceiling may be of a datasheet peak: a GeForce card boosts above the
// clock its peak assumes, so its best GEMM can pass that peak by some percent (the RTX 3090's,
// configs/gpus/rtx-3090.toml), never by a fifth.
inline constexpr double kMaxMatmulCeilingFraction = 1.2;

struct GpuSpec {
  DeviceKind kind = DeviceKind::kGpu;
  std::string name;                  // catalog key, e.g. "a100-80gb-sxm"; "cpu" for the host CPU
  std::string display_name;          // e.g. "NVIDIA A100 80GB SXM"
  std::vector<std::string> aliases;  // reference system's names, e.g. "a100"
  std::string architecture;          // "ampere", "hopper", ...
  double compute_capability = 0.0;   // 8.0 for A100; 0 for the host CPU

  // Dense (no sparsity) peak tensor throughput, TFLOP/s; 0 where the dtype is unsupported.
  double peak_fp32_tflops = 0.0;
  double peak_tf32_tflops = 0.0;
  double peak_fp16_tflops = 0.0;
  double peak_bf16_tflops = 0.0;
  // Best achievable matmul throughput as a fraction of peak (measured where published; the host
  // CPU's peaks are its measured matmul throughput, so its fraction is 1): of the tensor-core
  // peaks (tf32, fp16, bf16), and of the fp32 peak on the CUDA cores where it differs (0: the
  // same).
  double matmul_ceiling_fraction = 0.0;
  double fp32_matmul_ceiling_fraction = 0.0;
  bool matmul_ceiling_measured = false;

  int64_t memory_bytes = 0;
  double memory_bandwidth_gb_per_s = 0.0;  // 1e9 bytes/s

  std::string gpu_link;               // "nvlink3", "pcie4", ...
  double gpu_link_gb_per_s = 0.0;     // per GPU, per direction, among all GPUs of a node
  double pair_bridge_gb_per_s = 0.0;  // NVLink bridge joining two cards; 0: the card takes none
  bool pair_bridge = false;           // whether a pair of these cards has its bridge fitted
  bool peer_to_peer = true;           // whether GPUs reach each other's memory directly (P2P)
  std::string host_link;              // "pcie4"
  double host_link_gb_per_s = 0.0;    // per direction, theoretical

  double tdp_w = 0.0;
  // A power limit below the TDP (nvidia-smi -pl; torchtitan's H100s ran at 500 W of 700): 0, the
  // TDP. The catalog's peaks and measured ceilings are at the TDP.
  double power_limit_w = 0.0;
  double purchase_usd = 0.0;  // 0 for the host CPU (and its cloud price): it is not for sale
  std::string purchase_date;
  double cloud_usd_per_gpu_hour = 0.0;  // 0: unknown
  std::string cloud_date;

  std::map<std::string, std::string> sources;  // table name -> source text
  std::string source_path;

  // The GPU's compute rate under its power limit, as a fraction of the rate at its TDP. A GPU
  // over its limit lowers its clock, and the voltage with it: dynamic power is C V^2 f, so with V
  // proportional to f it goes as f^3 and the clock as the cube root of the power
  // (docs/planner.md, "Power limits"). Memory bandwidth keeps its own clock.
  // The lowest power limit planned, as a fraction of the TDP: no GPU lets its limit go lower
  // (an A100's floor is 100 of 400 W), and the cube-root law says nothing below.
  static constexpr double kLowestPowerLimitFraction = 0.25;
  // The same for a limit given as a fraction of the TDP (1 or more: none).
  static double clock_factor_at(double limit_fraction_of_tdp) {
    return limit_fraction_of_tdp <= 0.0 || limit_fraction_of_tdp >= 1.0
               ? 1.0
               : std::cbrt(limit_fraction_of_tdp);
  }
  // The power limit as a share of the TDP: 1 without one.
  double power_limit_share() const {
    return power_limit_w <= 0.0 || tdp_w <= 0.0 ? 1.0 : power_limit_w / tdp_w;
  }
  // Limits the power to `share` of the TDP (nvidia-smi -pl).
  void limit_power_to_share(double share) { power_limit_w = share * tdp_w; }
  double compute_clock_factor() const { return clock_factor_at(power_limit_share()); }
  bool supports_bf16() const { return peak_bf16_tflops > 0.0; }
  bool supports_tf32() const { return peak_tf32_tflops > 0.0; }
  // Whether the peaks are known (a GPU's datasheet, the host CPU's measurement), so that MFU means
  // something and a measurement above the matmul ceiling is a timing bug; not for the host CPU's
  // stand-in, whose figures are invented.
  bool peaks_known() const { return kind == DeviceKind::kGpu || matmul_ceiling_measured; }
};

// The links of a node as configured where they differ from its GPU file's defaults (`[links]`
// pair_bridge and peer_to_peer): a cluster file's partition, a published case or a command's
// --pair-bridge and --peer-to-peer. Unset: the GPU file's.
struct LinkSettings {
  std::optional<bool> pair_bridge;
  std::optional<bool> peer_to_peer;

  // Pairs joined by their NVLink bridge: asked for (or the file's default) on a card that takes
  // one.
  bool pair_bridged(const GpuSpec& gpu) const {
    return pair_bridge.value_or(gpu.pair_bridge) && gpu.pair_bridge_gb_per_s > 0.0;
  }
  bool peer_to_peer_on(const GpuSpec& gpu) const { return peer_to_peer.value_or(gpu.peer_to_peer); }
  // These settings where they are set, `base`'s elsewhere.
  LinkSettings over(const LinkSettings& base) const {
    return {pair_bridge ? pair_bridge : base.pair_bridge,
            peer_to_peer ? peer_to_peer : base.peer_to_peer};
  }
  bool operator==(const LinkSettings&) const = default;
};

}  // namespace gpudays
