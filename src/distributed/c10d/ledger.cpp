#include "distributed/c10d/ledger.h"

#include <c10/util/Exception.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace gpudays {
namespace {

std::string progress_key(int rank) {
  return fmt::format("gpudays/collectives/{}", rank);
}

}  // namespace

// How often the background publisher looks for a new count.
constexpr std::chrono::milliseconds kPublishPeriod{50};

CollectiveLedger::CollectiveLedger(c10::intrusive_ptr<c10d::Store> store,
                                   int rank,
                                   int size,
                                   std::string engine,
                                   LedgerPublish publish_mode)
    : store_(std::move(store)), rank_(rank), size_(size), engine_(std::move(engine)) {
  publish(0);
  if (publish_mode == LedgerPublish::kInBackground) {
    publisher_ = std::thread([this] { publish_while_running(); });
  }
}

CollectiveLedger::~CollectiveLedger() {
  if (!publisher_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  publisher_.join();
}

void CollectiveLedger::publish(int64_t count) {
  store_->set(progress_key(rank_), std::to_string(count));
}

// A store that stops answering (rank 0 gone) ends the publishing quietly; a failure says so.
void CollectiveLedger::publish_while_running() {
  int64_t published = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_.wait_for(lock, kPublishPeriod, [this] { return stopping_; })) {
    const int64_t count = collectives_.load();
    if (count == published) continue;
    try {
      publish(count);
      published = count;
    } catch (const std::exception&) {
      return;
    }
  }
}

void CollectiveLedger::run(const char* what,
                           const std::function<c10::intrusive_ptr<c10d::Work>()>& start,
                           const std::function<void(const c10::intrusive_ptr<c10d::Work>&)>& wait) {
  const int64_t number = ++collectives_;
  const auto began = std::chrono::steady_clock::now();
  try {
    if (!publisher_.joinable()) publish(number);
    wait(start());
  } catch (const c10::OutOfMemoryError&) {
    throw;  // a result of the trial's (out of memory), not a failure of the collective
  } catch (const std::exception& e) {
    failed_ = true;
    const double waited_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    throw std::runtime_error(
        fmt::format("{} (collective {}) failed on rank {} of {} after "
                    "{:.1f} s: {}; {}: {}",
                    what,
                    number,
                    rank_,
                    size_,
                    waited_s,
                    missing_ranks(number),
                    engine_,
                    one_line(e)));
  }
}

// Which ranks never reached this rank's collective `reached_here`, as the store tells (this
// rank's own count published first: the background publisher may not have yet).
std::string CollectiveLedger::missing_ranks(int64_t reached_here) {
  std::vector<std::string> behind;
  try {
    store_->setTimeout(std::chrono::seconds(5));
    if (publisher_.joinable()) publish(reached_here);
    for (int r = 0; r < size_; ++r) {
      const std::vector<uint8_t> value = store_->get(progress_key(r));
      const int64_t reached = std::stoll(std::string(value.begin(), value.end()));
      if (reached < reached_here) behind.push_back(fmt::format("{} (at {})", r, reached));
    }
  } catch (const std::exception&) {
    return "the store on rank 0 does not answer: rank 0 is gone";
  }
  if (behind.empty()) return "every rank reached it (a transport failure)";
  return fmt::format("rank {} did not reach it", fmt::join(behind, ", "));
}

}  // namespace gpudays
