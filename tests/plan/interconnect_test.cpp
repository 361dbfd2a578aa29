// The node's links as configured (plan/time_model.h, collective_link): whether a pair of cards has
// its NVLink bridge fitted, whether the GPUs have peer-to-peer, the GPU file's defaults for both
// and their overrides, and what a 2-GPU plan's communication crosses and costs with each.
#include <gtest/gtest.h>

#include "catalog/gpu_loader.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/planner.h"
#include "test_util.h"

namespace gpudays {
namespace {

const GpuSpec& gpu(const std::string& name) {
  return test::catalog().gpu(name);
}

CollectiveLink link_of(const std::string& name,
                       ClusterShape shape,
                       LinkSettings links = {},
                       double inter_node_gb_per_s = 12.5) {
  TimeModelOptions options;
  options.links = links;
  options.inter_node_gb_per_s = inter_node_gb_per_s;
  return collective_link(Cluster{shape, &gpu(name)}, options);
}

// Plain data parallelism, so that the gradient all-reduce is the whole communication.
PlanRow two_gpu_row(const std::string& name, LinkSettings links) {
  const ModelSpec& model = test::catalog().model("pythia-160m");
  const Configuration config{
      MethodSet{/*free_lunch=*/true, /*activation_checkpointing=*/false, Sharding::kNone, false},
      /*micro_batch_size=*/8,
      /*grad_acc_steps=*/model.recipe.global_batch / 16};
  PlanOptions options;
  options.time.links = links;
  return plan_configuration(model, Cluster{{1, 2}, &gpu(name)}, config, options);
}

TEST(Interconnect, GeForceAndWorkstationPairsHaveNoBridgeUnlessStated) {
  for (const char* name : {"rtx-3090", "rtx-a6000"}) {
    EXPECT_GT(gpu(name).pair_bridge_gb_per_s, 0.0) << name << " takes a bridge";
    EXPECT_FALSE(gpu(name).pair_bridge) << name << " is not assumed to have it fitted";
    const CollectiveLink c = link_of(name, {1, 2});
    EXPECT_EQ(c.route, CollectiveRoute::kGpuLink) << name;
    EXPECT_EQ(c.name(), "pcie4") << name;
  }
  EXPECT_TRUE(gpu("a100-80gb-pcie").pair_bridge) << "data-centre PCIe cards: bridged pairs";
  EXPECT_EQ(link_of("a100-80gb-pcie", {1, 2}).name(), "nvlink_bridge");
}

TEST(Interconnect, TheBridgeChangesATwoGpuPlansCommunicationAndItsLink) {
  const PlanRow plain = two_gpu_row("rtx-3090", {});
  const PlanRow bridged = two_gpu_row("rtx-3090", {.pair_bridge = true});
  EXPECT_EQ(plain.collective.name(), "pcie4");
  EXPECT_EQ(bridged.collective.name(), "nvlink_bridge");
  // PCIe 4.0 x16 at half its 31.5 GB/s; the bridge's 56.25 GB/s at 80% (configs/gpus/rtx-3090).
  EXPECT_NEAR(plain.collective.bus_bytes_per_s / kGB, 31.5 * 0.5, 1e-9);
  EXPECT_NEAR(bridged.collective.bus_bytes_per_s / kGB, 56.25 * 0.8, 1e-9);
  EXPECT_GT(plain.time.communication_s, bridged.time.communication_s);
  EXPECT_GT(plain.step_time_s, bridged.step_time_s);
  EXPECT_EQ(plain.time.compute_s, bridged.time.compute_s) << "only the links differ";
  EXPECT_EQ(two_gpu_row("rtx-3090", {.pair_bridge = false}).collective, plain.collective);
}

TEST(Interconnect, ABridgeJoinsOnlyAPairOnOneNode) {
  const LinkSettings bridged{.pair_bridge = true};
  EXPECT_EQ(link_of("rtx-3090", {1, 4}, bridged).name(), "pcie4");
  EXPECT_EQ(link_of("rtx-3090", {2, 2}, bridged).name(), "network");
  EXPECT_EQ(link_of("rtx-3090", {1, 1}, bridged).route, CollectiveRoute::kNone);
  EXPECT_EQ(link_of("rtx-3090", {1, 1}).bus_bytes_per_s, 0.0);
  // A card that takes no bridge ignores the setting in a plan; the commands refuse it.
  EXPECT_EQ(link_of("rtx-4090", {1, 2}, bridged).route, CollectiveRoute::kHostMemory);
  EXPECT_THROW(check_links_possible(gpu("rtx-4090"), bridged), InputError);
  EXPECT_NO_THROW(check_links_possible(gpu("rtx-3090"), bridged));
}

TEST(Interconnect, WithoutPeerToPeerCollectivesGoThroughHostMemory) {
  EXPECT_FALSE(gpu("rtx-4090").peer_to_peer);
  EXPECT_TRUE(gpu("rtx-3090").peer_to_peer);
  const CollectiveLink staged = link_of("rtx-4090", {1, 2});
  EXPECT_EQ(staged.name(), "host_memory");
  EXPECT_EQ(staged.link, "pcie4");
  EXPECT_NEAR(staged.bus_bytes_per_s / kGB, 31.5 * 0.25, 1e-9);
  // Forced either way; no peer-to-peer leaves a fitted bridge idle (NCCL_P2P_DISABLE covers it).
  EXPECT_EQ(link_of("rtx-4090", {1, 2}, {.peer_to_peer = true}).name(), "pcie4");
  EXPECT_EQ(link_of("rtx-3090", {1, 2}, {.pair_bridge = true, .peer_to_peer = false}).name(),
            "host_memory");
  EXPECT_GT(two_gpu_row("rtx-4090", {}).time.communication_s,
            two_gpu_row("rtx-4090", {.peer_to_peer = true}).time.communication_s);
  // Across nodes the slower of the node's path and the network bounds it.
  EXPECT_EQ(link_of("rtx-4090", {2, 2}, {}, /*inter_node_gb_per_s=*/100.0).name(), "host_memory");
  EXPECT_EQ(link_of("rtx-4090", {2, 2}, {}, /*inter_node_gb_per_s=*/1.0).name(), "network");
}

TEST(Interconnect, LaterSettingsWinWhereTheyAreSet) {
  const LinkSettings file{.pair_bridge = true, .peer_to_peer = false};
  const LinkSettings flags{.pair_bridge = false};
  EXPECT_EQ(flags.over(file), (LinkSettings{.pair_bridge = false, .peer_to_peer = false}));
  EXPECT_EQ(LinkSettings{}.over(file), file);
}

std::string gpu_file_error(const std::string& name,
                           const std::string& from,
                           const std::string& to) {
  const std::string text = test::read_file(gpu(name).source_path);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  const std::string path =
      test::write_temp_file("links-gpu.toml", std::string(text).replace(at, from.size(), to));
  try {
    load_gpu_file(path);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e.what();
  }
  return "";
}

TEST(GpuFile, LinkKeysAreCheckedAndNamed) {
  EXPECT_NE(gpu_file_error("rtx-3090", "pair_bridge = false", "pair_bridge = \"no\"")
                .find("[links]: pair_bridge: must be true or false"),
            std::string::npos);
  EXPECT_NE(gpu_file_error("rtx-4090", "peer_to_peer = false", "peer_to_peer = 0")
                .find("[links]: peer_to_peer: must be true or false"),
            std::string::npos);
  EXPECT_NE(gpu_file_error("rtx-4090", "peer_to_peer = false", "pair_bridge = true")
                .find("pair_bridge: true, but the card takes no bridge"),
            std::string::npos);
}

}  // namespace
}  // namespace gpudays
