// Saving and loading a run's state, re-sharding the optimizer on load.
#include "trainer/train_state.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "common/error.h"
#include "models/safetensors.h"
#include "train/engine.h"
#include "trainer/checkpoint_files.h"

namespace gpudays {
namespace fs = std::filesystem;
namespace {

constexpr const char* kModelFile = "model.safetensors";

std::string rank_file(int rank) {
  return fmt::format("rank-{}.safetensors", rank);
}

std::string slot_name(size_t slot, const std::string& moment) {
  return fmt::format("slot.{}.{}", slot, moment);
}

nlohmann::json slot_numels(Engine& engine) {
  nlohmann::json numels = nlohmann::json::array();
  for (const OptimizerSlice& s : engine.optimizer_slices()) numels.push_back(s.numel);
  return numels;
}

void write_rank_file(const std::string& staging, Engine& engine, int rank) {
  models::NamedTensors tensors;
  std::map<std::string, std::string> metadata;
  if (!engine.optimizer_replicated() || rank == 0) {
    const std::vector<OptimizerSlice> slices = engine.optimizer_slices();
    for (size_t s = 0; s < slices.size(); ++s) {
      if (slices[s].count == 0) continue;
      tensors.emplace_back(slot_name(s, "exp_avg"), slices[s].exp_avg);
      tensors.emplace_back(slot_name(s, "exp_avg_sq"), slices[s].exp_avg_sq);
      metadata[slot_name(s, "first")] = std::to_string(slices[s].first);
    }
  }
  tensors.emplace_back("rng.cpu", at::detail::getDefaultCPUGenerator().get_state());
  models::write_safetensors((fs::path(staging) / rank_file(rank)).string(), tensors, metadata);
}

// Elements [first, first + count) of a slot's moment, assembled from the ranks' files that hold
// pieces of it.
class SliceAssembler {
 public:
  SliceAssembler(const std::string& dir, int ranks) {
    for (int r = 0; r < ranks; ++r) {
      readers_.push_back(
          std::make_unique<models::SafetensorsReader>((fs::path(dir) / rank_file(r)).string()));
    }
  }

  at::Tensor read(size_t slot, const std::string& moment, int64_t first, int64_t count) const {
    at::Tensor out = at::zeros({count}, at::kFloat);
    for (const auto& reader : readers_) {
      const std::string name = slot_name(slot, moment);
      if (!reader->contains(name)) continue;
      const int64_t begin = std::stoll(reader->metadata().at(slot_name(slot, "first")));
      const at::Tensor piece = reader->read(name).reshape(-1);
      const int64_t lo = std::max(first, begin);
      const int64_t hi = std::min(first + count, begin + piece.numel());
      if (lo < hi) out.narrow(0, lo - first, hi - lo).copy_(piece.narrow(0, lo - begin, hi - lo));
    }
    return out;
  }

  const models::SafetensorsReader& reader(int rank) const { return *readers_.at(rank); }

 private:
  std::vector<std::unique_ptr<models::SafetensorsReader>> readers_;
};

}  // namespace

void save_checkpoint(const std::string& checkpoints_dir,
                     int64_t keep,
                     Engine& engine,
                     const std::vector<std::string>& names,
                     Communicator& comm,
                     const RunCounters& counters) {
  if (comm.rank() == 0) begin_checkpoint(checkpoints_dir, counters.step);
  comm.barrier();
  const std::string staging = staging_checkpoint_dir(checkpoints_dir, counters.step);
  const std::vector<at::Tensor> full = engine.full_parameters();
  if (comm.rank() == 0) {
    models::NamedTensors named;
    for (size_t i = 0; i < full.size(); ++i) named.emplace_back(names.at(i), full[i]);
    models::write_safetensors((fs::path(staging) / kModelFile).string(), named);
    for (const std::string& file : counters.files) {
      fs::copy_file(file, fs::path(staging) / fs::path(file).filename());
    }
  }
  write_rank_file(staging, engine, comm.rank());
  comm.barrier();
  if (comm.rank() == 0) {
    const nlohmann::json state = {
        {"step", counters.step},
        {"samples_seen", counters.samples_seen},
        {"world_size", comm.size()},
        {"replicated_optimizer", engine.optimizer_replicated()},
        {"slot_numels", slot_numels(engine)},
        {"optimizer_steps", engine.optimizer_steps()},
        {"optimizer_step_count", engine.optimizer_step_count()},
        {"loss_scale", engine.loss_scaler_state().scale},
        {"loss_scale_clean_steps", engine.loss_scaler_state().clean_steps},
        {"loss_scale_skipped", engine.loss_scaler_state().skipped},
        {"extra", counters.extra}};
    commit_checkpoint(checkpoints_dir, counters.step, state);
    prune_checkpoints(checkpoints_dir, keep);
  }
  comm.barrier();
}

std::vector<at::Tensor> read_checkpoint_parameters(const std::string& dir,
                                                   const std::vector<std::string>& names) {
  const models::SafetensorsReader model((fs::path(dir) / kModelFile).string());
  std::vector<at::Tensor> full;
  for (const std::string& name : names) {
    if (!model.contains(name)) {
      throw InputError(
          fmt::format("{}: {} has no tensor {} (another model?)", dir, kModelFile, name));
    }
    full.push_back(model.read(name).to(at::kFloat));
  }
  return full;
}

RunCounters load_checkpoint(const std::string& dir,
                            const nlohmann::json& state,
                            Engine& engine,
                            const std::vector<std::string>& names,
                            Communicator& comm) {
  if (state.at("slot_numels") != slot_numels(engine) ||
      state.at("replicated_optimizer").get<bool>() != engine.optimizer_replicated()) {
    throw InputError(fmt::format(
        "{}: written with another sharding stage or model; resume with the run file it was "
        "written with (the number of ranks may change)",
        dir));
  }
  engine.load_full_parameters(read_checkpoint_parameters(dir, names));
  const int old_world = state.at("world_size").get<int>();
  const SliceAssembler slices(dir, old_world);
  engine.load_optimizer(
      [&](size_t slot, const std::string& moment, int64_t first, int64_t count) {
        return slices.read(slot, moment, first, count);
      },
      state.at("optimizer_step_count").get<double>());
  engine.restore_counters(state.at("step").get<int64_t>(),
                          state.at("optimizer_steps").get<int64_t>(),
                          {state.at("loss_scale").get<double>(),
                           state.at("loss_scale_clean_steps").get<int64_t>(),
                           state.at("loss_scale_skipped").get<int64_t>()});
  const int rng_rank = comm.rank() < old_world ? comm.rank() : 0;
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  generator.set_state(slices.reader(rng_rank).read("rng.cpu"));
  return {
      state.at("step").get<int64_t>(), state.at("samples_seen").get<int64_t>(), state.at("extra")};
}

}  // namespace gpudays
