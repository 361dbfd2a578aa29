// The file store that carries rank 0's TCP store address (distributed/c10d/store.h): a reader
// takes only an address written within the rendezvous timeout, so a file left by a crashed run
// under the same job id is not read as this run's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/FileStore.hpp>

#include <fmt/format.h>

#include "common/error.h"
#include "distributed/c10d/store.h"

namespace gpudays {
namespace {

using Clock = std::chrono::system_clock;
using std::chrono::milliseconds;

const std::string kKey = "gpudays/tcp_store";

void put(c10d::Store& store, const std::string& text) {
  store.set(kKey, std::vector<uint8_t>(text.begin(), text.end()));
}

std::string temp_path(const char* name) {
  const std::string path = fmt::format("{}/gpudays-{}-{}", ::testing::TempDir(), name, getpid());
  std::remove(path.c_str());
  return path;
}

TEST(FileStoreAddress, AFreshAddressIsReadAtOnce) {
  const std::string path = temp_path("fresh");
  c10d::FileStore store(path, 1);
  put(store, stamped_address("node7:29500", Clock::now()));
  EXPECT_EQ(read_fresh_address(store, kKey, path, milliseconds(5000)), "node7:29500");
}

// A crashed run's address, older than the timeout, is skipped until rank 0 writes this run's.
TEST(FileStoreAddress, AStaleAddressWaitsForRankZerosNewOne) {
  const std::string path = temp_path("stale");
  c10d::FileStore store(path, 1);
  put(store, stamped_address("old:1", Clock::now() - std::chrono::hours(2)));
  std::thread rank_zero([&] {
    std::this_thread::sleep_for(milliseconds(200));
    c10d::FileStore writer(path, 1);
    put(writer, stamped_address("new:2", Clock::now()));
  });
  const std::string address = read_fresh_address(store, kKey, path, milliseconds(5000));
  rank_zero.join();
  EXPECT_EQ(address, "new:2");
}

// Only a stale (or an unstamped) address: a one-line error naming the file and the remedy, once
// the timeout has passed.
TEST(FileStoreAddress, OnlyAStaleAddressFailsWithTheFileNamed) {
  for (const std::string& entry :
       {stamped_address("old:1", Clock::now() - std::chrono::hours(2)), std::string("old:1")}) {
    const std::string path = temp_path("only-stale");
    c10d::FileStore store(path, 1);
    put(store, entry);
    const auto start = Clock::now();
    try {
      read_fresh_address(store, kKey, path, milliseconds(300));
      FAIL() << "expected an EnvironmentError for " << entry;
    } catch (const EnvironmentError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find("GPUDAYS_STORE_FILE"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    EXPECT_GE(Clock::now() - start, milliseconds(300));
  }
}

}  // namespace
}  // namespace gpudays
