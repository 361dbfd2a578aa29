// `plan` on a pair of cards as configured: the link its collectives cross and that link's bandwidth
// in the summary and in the JSON rows, --pair-bridge and --peer-to-peer, and the one-line errors
// of a bridge asked for on a card without one and of a bad link key in a GPU file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "process_dir.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

// Plain data parallelism pinned, so that the gradient all-reduce is the whole communication.
const std::string kPair =
    "plan --model pythia-160m --gpu rtx-3090 --gpus-per-node 2 --sharding none --free-lunch on "
    "--checkpointing off --offloading off --micro-batch-size 8 --no-calibration";

nlohmann::json best_row(const std::string& args) {
  const auto r = run_gpudays(args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("best");
}

TEST(InterconnectCli, TheBridgeChangesTheReportedLinkAndTheCommunicationTime) {
  const nlohmann::json plain = best_row(kPair);
  const nlohmann::json bridged = best_row(kPair + " --pair-bridge on");
  EXPECT_EQ(plain.at("collective_link"), "pcie4") << "an RTX 3090 pair has no bridge by default";
  EXPECT_EQ(bridged.at("collective_link"), "nvlink_bridge");
  EXPECT_NEAR(plain.at("collective_gb_per_s").get<double>(), 15.75, 1e-9);
  EXPECT_NEAR(bridged.at("collective_gb_per_s").get<double>(), 45.0, 1e-9);
  EXPECT_GT(plain.at("time_communication_s").get<double>(),
            bridged.at("time_communication_s").get<double>());
  EXPECT_EQ(best_row(kPair + " --pair-bridge off"), plain);

  const auto text = run_gpudays(kPair);
  EXPECT_NE(text.out.find("  interconnect   collectives over pcie4 peer-to-peer at 15.8 GB/s per "
                          "GPU; no NVLink bridge (--pair-bridge on if the pair has one)\n"),
            std::string::npos)
      << text.out;
  const auto bridged_text = run_gpudays(kPair + " --pair-bridge on");
  EXPECT_NE(bridged_text.out.find("collectives over the pair's NVLink bridge at 45.0 GB/s"),
            std::string::npos)
      << bridged_text.out;
}

TEST(InterconnectCli, WithoutPeerToPeerThePlanGoesThroughHostMemory) {
  const std::string rtx4090 =
      "plan --model pythia-160m --gpu rtx-4090 --gpus-per-node 2 --no-calibration";
  EXPECT_EQ(best_row(rtx4090).at("collective_link"), "host_memory");
  EXPECT_EQ(best_row(rtx4090 + " --peer-to-peer on").at("collective_link"), "pcie4");
  const auto text = run_gpudays(rtx4090);
  EXPECT_NE(text.out.find("host memory over pcie4 (no peer-to-peer; NCCL_P2P_DISABLE=1)"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(
      best_row("plan --model pythia-160m --gpu rtx-4090 --no-calibration").at("collective_link"),
      "none")
      << "one GPU";
}

TEST(InterconnectCli, ABridgeOnACardWithoutOneIsRefused) {
  const auto r = run_gpudays(
      "plan --model pythia-160m --gpu rtx-4090 --gpus-per-node 2 "
      "--pair-bridge on");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("the rtx-4090 takes none"), std::string::npos) << r.err;
}

TEST(InterconnectCli, ABadLinkKeyInAGpuFileNamesFileAndKey) {
  namespace fs = std::filesystem;
  const fs::path dir = test::process_temp_dir().fresh_dir("links-configs");
  fs::copy(fs::path(GPUDAYS_TEST_DATA_DIR) / "../../configs",
           dir,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  const fs::path gpu = dir / "gpus" / "rtx-3090.toml";
  std::string text = test::read_file(gpu.string());
  const std::string from = "pair_bridge = false";
  ASSERT_NE(text.find(from), std::string::npos);
  std::ofstream(gpu) << text.replace(text.find(from), from.size(), "pair_bridge = \"no\"");
  const auto r = run_gpudays("--config-dir " + dir.string() +
                             " plan --model pythia-160m --gpu rtx-3090 --gpus-per-node 2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(gpu.string() + " [links]: pair_bridge: must be true or false"),
            std::string::npos)
      << r.err;
}

// A cluster file is held to the flags' bounds: its network near 0 printed step times of 300
// digits, its 1000 GPUs per node passed --gpus-per-node's limit of 64. Each names file and key.
TEST(InterconnectCli, AClusterFilesFiguresHaveTheFlagsBounds) {
  const std::string original =
      test::read_file(std::string(GPUDAYS_TEST_DATA_DIR) + "/slurm-cluster.toml");
  int files = 0;
  const auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = original;
    EXPECT_NE(text.find(from), std::string::npos) << from;
    return test::write_temp_file("cluster" + std::to_string(files++) + ".toml",
                                 text.replace(text.find(from), from.size(), to));
  };
  const std::string slow = edited("inter_node_gb_per_s = 25.0", "inter_node_gb_per_s = 1e-300");
  const auto r = run_gpudays("plan --model pythia-1b --cluster " + slow + " --nodes 2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(slow + ": inter_node_gb_per_s: 1e-300 is not in [0.01, 10000]"),
            std::string::npos)
      << r.err;
  const std::string wide = edited("gpus_per_node = 4", "gpus_per_node = 1000");
  const auto w = run_gpudays("plan --model pythia-1b --cluster " + wide);
  EXPECT_EQ(w.exit_code, 2) << w.err;
  EXPECT_NE(w.err.find(wide + " [partitions.a100]: gpus_per_node: 1000 is not in [1, 64]"),
            std::string::npos)
      << w.err;
  // A file out of bounds is refused whatever the command line sets: the file is wrong.
  const auto o = run_gpudays("plan --model pythia-1b --cluster " + slow +
                             " --nodes 2 --inter-node-gb-per-s 25");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  // Within bounds, the command line's own figure wins over the file's.
  const std::string fast = edited("inter_node_gb_per_s = 25.0", "inter_node_gb_per_s = 0.5");
  EXPECT_EQ(run_gpudays("plan --model pythia-1b --cluster " + fast +
                        " --nodes 2 --inter-node-gb-per-s 25")
                .exit_code,
            0);
}

}  // namespace
}  // namespace gpudays
