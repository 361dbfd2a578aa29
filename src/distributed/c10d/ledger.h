// What every c10d communicator does around a collective (internal to src/distributed/c10d): each
// rank counts its collectives in the store, and a collective that fails becomes one line naming the
// operation, this rank, how long it waited and the ranks that never reached it. The count reaches
// the store before each collective (exact: Gloo, whose failures the call itself raises), or from
// a background thread every 50 ms when it changed (NCCL: no store round trip inside a timed step;
// its failures surface after a timeout of seconds, by which time every live rank's count is in).
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gpudays {

enum class LedgerPublish { kBeforeEachCollective, kInBackground };

class CollectiveLedger {
 public:
  CollectiveLedger(c10::intrusive_ptr<c10d::Store> store,
                   int rank,
                   int size,
                   std::string engine,
                   LedgerPublish publish = LedgerPublish::kBeforeEachCollective);
  ~CollectiveLedger();
  CollectiveLedger(const CollectiveLedger&) = delete;
  CollectiveLedger& operator=(const CollectiveLedger&) = delete;

  // Counts the collective, starts it and waits for it (`wait` decides what waiting means for the
  // engine); an out-of-memory error propagates unchanged (the trial records it as oom), any other
  // failure is rethrown as std::runtime_error with the line above.
  void run(const char* what,
           const std::function<c10::intrusive_ptr<c10d::Work>()>& start,
           const std::function<void(const c10::intrusive_ptr<c10d::Work>&)>& wait);
  // A collective failed on this rank (its communicator ends by aborting, not by shutting down).
  bool failed() const { return failed_; }

 private:
  void publish(int64_t count);
  void publish_while_running();
  std::string missing_ranks(int64_t reached_here);

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int size_;
  std::string engine_;
  std::atomic<int64_t> collectives_{0};
  bool failed_ = false;
  // kInBackground: the publisher and how it is stopped.
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread publisher_;
};

}  // namespace gpudays
