// Helpers of the `gpudays train` command-line tests and the workflow suite (tests/workflow):
// running a shell command with one thread per process (runs compared step by step need the same
// thread count), reading OUT/metrics.jsonl, and a tiny model's run directory with token data.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../process_dir.h"
#include "common/child_process.h"

namespace gpudays::test {

inline ChildResult sh(const std::string& command) {
  return run_child({"/bin/sh", "-c", "export OMP_NUM_THREADS=1; " + command},
                   ChildOptions{600.0, ""});
}

// step -> its metrics line of DIR/metrics.jsonl (each step once).
inline std::map<int64_t, nlohmann::json> read_metrics(const std::filesystem::path& out_dir) {
  std::map<int64_t, nlohmann::json> by_step;
  std::ifstream in(out_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(by_step.count(j.at("step").get<int64_t>()), 0u) << "step logged twice: " << line;
    by_step[j.at("step").get<int64_t>()] = j;
  }
  return by_step;
}

// The losses of two runs, step by step: equal bit for bit (tolerance 0) or within `tolerance`.
inline void expect_same_losses(const std::map<int64_t, nlohmann::json>& a,
                               const std::map<int64_t, nlohmann::json>& b,
                               double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [step, j] : a) {
    ASSERT_EQ(b.count(step), 1u) << step;
    if (tolerance == 0.0) {
      EXPECT_EQ(j.at("loss").get<double>(), b.at(step).at("loss").get<double>()) << "step " << step;
    } else {
      EXPECT_NEAR(j.at("loss").get<double>(), b.at(step).at("loss").get<double>(), tolerance)
          << "step " << step;
    }
  }
}

// The tiny GPT-NeoX of the train tests (64 tokens, 2 layers) and its run directories.
constexpr int64_t kVocab = 64;
namespace fs = std::filesystem;

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Tokens of a Markov chain: next = (7 * previous + b) mod 64 with b in {0, 1} equally likely:
// 1 bit (0.693 nats) per token once the previous token is seen, about ln 64 = 4.16 without it.
// Returns the unigram entropy of what was written, in nats.
inline double write_tokens(const fs::path& path, int64_t count) {
  std::mt19937 rng(5);
  std::vector<uint16_t> tokens(static_cast<size_t>(count));
  uint16_t t = 1;
  std::map<uint16_t, int64_t> freq;
  for (uint16_t& x : tokens) {
    t = static_cast<uint16_t>((7 * t + rng() % 2) % kVocab);
    x = t;
    ++freq[t];
  }
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(count * 2));
  double h = 0.0;
  for (const auto& [token, n] : freq) {
    const double p = static_cast<double>(n) / static_cast<double>(count);
    h -= p * std::log(p);
  }
  return h;
}

struct Fixture {
  fs::path dir;
  std::string data;
  double unigram_nats = 0.0;
};

// A run directory: the tiny model, token data and a run file with `extra` appended to [train].
inline Fixture make_run(const std::string& name,
                        const std::string& methods,
                        const std::string& train,
                        int64_t steps,
                        int64_t micro = 4,
                        int64_t acc = 2) {
  Fixture f;
  f.dir = process_temp_dir().fresh_dir(name);
  write_text(f.dir / "tiny.toml", R"(name = "tiny-gpt-neox"
family = "gpt_neox"
[arch]
n_layers = 2
d_model = 32
n_heads = 2
d_ffn = 64
vocab_size = 64
seq_len = 16
max_position_embeddings = 16
rotary_pct = 0.25
[recipe]
global_batch = 8
train_steps = 1000
precision = "fp32"
optimizer = "adamw"
lr = 0.003
schedule = "cosine"
warmup_steps = 5
min_lr = 0.0003
)");
  write_text(f.dir / "run.toml",
             "model_file = \"tiny.toml\"\ngpu = \"cpu\"\nnum_nodes = 1\ngpus_per_node = 1\n"
             "[methods]\n" +
                 methods + "\n[batch]\nglobal_batch = 8\nmicro_batch_size = " +
                 std::to_string(micro) + "\ngrad_acc_steps = " + std::to_string(acc) +
                 "\n[schedule]\nsteps = " + std::to_string(steps) +
                 "\nclip_grad_norm = 1.0\n[train]\nseed = 7\n" + train +
                 "\n[data]\neval_fraction = 0.02\n");
  f.data = (f.dir / "tokens.u16").string();
  f.unigram_nats = write_tokens(f.data, 24000);
  return f;
}

inline std::string train_command(const Fixture& f,
                                 const std::string& out,
                                 const std::string& extra = "") {
  return std::string(GPUDAYS_BINARY) + " train --config " + (f.dir / "run.toml").string() +
         " --data " + f.data + " --out " + (f.dir / out).string() + " " + extra;
}

inline std::map<int64_t, nlohmann::json> metrics(const Fixture& f, const std::string& out) {
  return read_metrics(f.dir / out);
}

}  // namespace gpudays::test
