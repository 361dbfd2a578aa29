#include "dist/c10d/ledger.h"

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

CollectiveLedger::CollectiveLedger(c10::intrusive_ptr<c10d::Store> store,
                                   int rank,
                                   int size,
                                   std::string engine)
    : store_(std::move(store)), rank_(rank), size_(size), engine_(std::move(engine)) {
  publish();
}

void CollectiveLedger::publish() {
  store_->set(progress_key(rank_), std::to_string(collectives_));
}

void CollectiveLedger::run(const char* what,
                           const std::function<c10::intrusive_ptr<c10d::Work>()>& start,
                           const std::function<void(const c10::intrusive_ptr<c10d::Work>&)>& wait) {
  ++collectives_;
  const auto began = std::chrono::steady_clock::now();
  try {
    publish();
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
                    collectives_,
                    rank_,
                    size_,
                    waited_s,
                    missing_ranks(),
                    engine_,
                    one_line(e)));
  }
}

// Which ranks never reached this rank's current collective, as the store tells.
std::string CollectiveLedger::missing_ranks() {
  std::vector<std::string> behind;
  try {
    store_->setTimeout(std::chrono::seconds(5));
    for (int r = 0; r < size_; ++r) {
      const std::vector<uint8_t> value = store_->get(progress_key(r));
      const int64_t reached = std::stoll(std::string(value.begin(), value.end()));
      if (reached < collectives_) behind.push_back(fmt::format("{} (at {})", r, reached));
    }
  } catch (const std::exception&) {
    return "the store on rank 0 does not answer: rank 0 is gone";
  }
  if (behind.empty()) return "every rank reached it (a transport failure)";
  return fmt::format("rank {} did not reach it", fmt::join(behind, ", "));
}

}  // namespace gpudays
