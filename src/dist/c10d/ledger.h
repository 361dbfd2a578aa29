// What every c10d communicator does around a collective (internal to src/dist/c10d): each rank
// counts its collectives in the store, and a collective that fails becomes one line naming the
// operation, this rank, how long it waited and the ranks that never reached it.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <string>

namespace gpudays {

class CollectiveLedger {
 public:
  CollectiveLedger(c10::intrusive_ptr<c10d::Store> store, int rank, int size, std::string engine);

  // Counts the collective, starts it and waits for it (`wait` decides what waiting means for the
  // engine); an out-of-memory error propagates unchanged (the trial records it as oom), any other
  // failure is rethrown as std::runtime_error with the line above.
  void run(const char* what,
           const std::function<c10::intrusive_ptr<c10d::Work>()>& start,
           const std::function<void(const c10::intrusive_ptr<c10d::Work>&)>& wait);
  // A collective failed on this rank (its communicator ends by aborting, not by shutting down).
  bool failed() const { return failed_; }

 private:
  void publish();
  std::string missing_ranks();

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int size_;
  std::string engine_;
  int64_t collectives_ = 0;
  bool failed_ = false;
};

}  // namespace gpudays
