// The store of a rendezvous: TCPStore at a known address, or one whose address travels through a
// FileStore.
#include "distributed/c10d/store.h"

#include <unistd.h>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

c10::intrusive_ptr<c10d::TCPStore> tcp_store(const std::string& host,
                                             int port,
                                             bool serve,
                                             const Rendezvous& r,
                                             std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(port);
  options.isServer = serve;
  // The server does not wait for the workers here: the process group's own rendezvous over the
  // store waits for every rank (with the timeout), and a server waiting in its constructor hung
  // two ranks meeting at MASTER_ADDR:MASTER_PORT (Slurm, a hand-set address) until the timeout.
  options.waitWorkers = false;
  options.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(host, options);
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "127.0.0.1";
  return name;
}

// Rank 0 serves a TCP store on a free port and writes its address into the file store; the others
// read it. Every rank drops the file store afterwards (the last one removes the file). Each world
// a process opens has its own file, numbered in the order the process opens them, which is the
// same on every rank of a job: consecutive worlds on one file raced (a rank that opened the next
// world before a slow one had dropped the previous one's file read the old address, or lost the
// file when the last holder of the old world removed it, and rank 0 waited alone).
c10::intrusive_ptr<c10d::Store> tcp_store_through_file(const Rendezvous& r,
                                                       std::chrono::milliseconds timeout) {
  static std::atomic<int64_t> worlds_opened{0};
  const std::string path = fmt::format("{}.{}", r.store.file, worlds_opened++);
  const std::string key = "gpudays/tcp_store";
  auto file = c10::make_intrusive<c10d::FileStore>(path, r.ranks.world_size);
  file->setTimeout(timeout);
  if (r.ranks.rank == 0) {
    auto store = tcp_store(host_name(), /*port=*/0, /*serve=*/true, r, timeout);
    const std::string address = stamped_address(fmt::format("{}:{}", host_name(), store->getPort()),
                                                std::chrono::system_clock::now());
    file->set(key, std::vector<uint8_t>(address.begin(), address.end()));
    return store;
  }
  const std::string text = read_fresh_address(*file, key, path, timeout);
  const size_t colon = text.rfind(':');
  return tcp_store(
      text.substr(0, colon), std::stoi(text.substr(colon + 1)), /*serve=*/false, r, timeout);
}

}  // namespace

std::string stamped_address(const std::string& address,
                            std::chrono::system_clock::time_point written) {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(written.time_since_epoch()).count();
  return fmt::format("{}@{}", address, ns);
}

std::string read_fresh_address(c10d::Store& file,
                               const std::string& key,
                               const std::string& path,
                               std::chrono::milliseconds timeout) {
  using Clock = std::chrono::system_clock;
  const auto deadline = Clock::now() + timeout;
  double stale_age_s = 0.0;
  for (;;) {
    const std::vector<uint8_t> bytes = file.get(key);  // waits for the key itself
    const std::string text(bytes.begin(), bytes.end());
    const size_t at = text.rfind('@');
    int64_t ns = 0;
    const char* stamp = at == std::string::npos ? nullptr : text.data() + at + 1;
    const char* end = text.data() + text.size();
    if (stamp && std::from_chars(stamp, end, ns).ptr == end) {  // else: not this version's entry
      const auto written = Clock::time_point(
          std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
      const auto age = Clock::now() - written;
      if (age <= timeout && age >= -timeout) return text.substr(0, at);
      stale_age_s = std::chrono::duration<double>(age).count();
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw EnvironmentError(fmt::format(
      "the file store {} holds only a stale address (written {:.0f} s ago, by an earlier run "
      "with the same job id?) and rank 0 wrote none within {} ms: remove the file, or set "
      "GPUDAYS_STORE_FILE to a new path",
      path,
      stale_age_s,
      timeout.count()));
}

c10::intrusive_ptr<c10d::Store> open_store(const Rendezvous& r, std::chrono::milliseconds timeout) {
  c10::intrusive_ptr<c10d::Store> store;
  if (!r.store.file.empty()) {
    store = tcp_store_through_file(r, timeout);
  } else {
    const bool serve = r.ranks.rank == 0 && !r.store.served_by_launcher;
    store = tcp_store(r.store.host, r.store.port, serve, r, timeout);
  }
  if (r.store.key_prefix.empty()) return store;
  return c10::make_intrusive<c10d::PrefixStore>(r.store.key_prefix, store);
}

namespace {

std::string store_name(const Rendezvous& r) {
  return r.store.file.empty() ? fmt::format("{}:{}", r.store.host, r.store.port)
                              : fmt::format("the file store {}", r.store.file);
}

}  // namespace

void await_every_rank(c10d::Store& store, const Rendezvous& r, const WorldOptions& options) {
  const std::string key = "gpudays/arrived";
  int64_t arrived = store.add(key, 1);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(options.rendezvous_timeout_s);
  while (arrived < r.ranks.world_size) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw EnvironmentError(fmt::format(
          "rank {}: {} of {} ranks arrived at {} within {:g} s (GPUDAYS_RENDEZVOUS_TIMEOUT_S): a "
          "rank never started, died, or cannot reach it",
          r.ranks.rank,
          arrived,
          r.ranks.world_size,
          store_name(r),
          options.rendezvous_timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    arrived = store.add(key, 0);
  }
}

std::string rendezvous_failure(const Rendezvous& r,
                               const WorldOptions& options,
                               const std::exception& e) {
  return fmt::format(
      "rank {} of {}: the ranks did not all meet at {} within {:g} s "
      "(GPUDAYS_RENDEZVOUS_TIMEOUT_S): "
      "a rank never started, died, or cannot reach it ({})",
      r.ranks.rank,
      r.ranks.world_size,
      store_name(r),
      options.rendezvous_timeout_s,
      one_line(e));
}

}  // namespace gpudays
