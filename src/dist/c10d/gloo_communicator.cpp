// The Gloo engine: the communicator interface over c10d's ProcessGroupGloo, on CPU buffers wrapped
// as tensors without copies. Gloo reduces fp32, fp64, fp16, bf16 and int64 itself (16-bit sums in
// float, rounded once per step, as the MPI engine's own operators did), so no type is converted.
// Each rank counts its collectives in the store; when one fails, the ranks behind are named.
#include <ATen/ops/from_blob.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "dist/c10d/store.h"
#include "dist/world.h"

namespace gpudays {
namespace {

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::kFloat32:
      return at::kFloat;
    case DType::kFloat64:
      return at::kDouble;
    case DType::kFloat16:
      return at::kHalf;
    case DType::kBFloat16:
      return at::kBFloat16;
    case DType::kInt64:
      return at::kLong;
  }
  throw std::logic_error("Gloo communicator: unknown DType");
}

// A caller's buffer as a flat CPU tensor (no copy; the caller keeps it alive during the call).
at::Tensor wrap(const void* buffer, size_t count, DType d) {
  return at::from_blob(const_cast<void*>(buffer),
                       {static_cast<int64_t>(count)},
                       at::TensorOptions().dtype(scalar_type(d)));
}

c10d::ReduceOp c10d_op(ReduceOp op) {
  return op == ReduceOp::kSum ? c10d::ReduceOp::SUM : c10d::ReduceOp::MAX;
}

std::chrono::milliseconds milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// The first line of an error's text, without c10's backtrace.
std::string first_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  text = text.substr(0, text.find('\n'));
  return text;
}

std::string progress_key(int rank) {
  return fmt::format("gpudays/collectives/{}", rank);
}

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(const Rendezvous& r, const WorldOptions& options)
      : rank_(r.ranks.rank), size_(r.ranks.world_size), timeout_s_(options.collective_timeout_s) {
    store_ = open_store(r, milliseconds(options.rendezvous_timeout_s));
    publish_progress();
    auto gloo_options = c10d::ProcessGroupGloo::Options::create_default(milliseconds(timeout_s_));
    auto gloo_store = c10::make_intrusive<c10d::PrefixStore>("gloo/", store_);
    group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(gloo_store, rank_, size_, gloo_options);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return "gloo"; }

  void all_reduce(void* buffer, size_t count, DType d, ReduceOp op) override {
    std::vector<at::Tensor> tensors = {wrap(buffer, count, d)};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d_op(op);
    run("all_reduce", [&] { return group_->allreduce(tensors, options); });
  }
  // An all-reduce of a copy of `send`, then this rank's block copied out. Gloo's own
  // _reduce_scatter_base makes the same full-size copy, but keeps it out of reach of release()
  // (below) for a while after the wait returns.
  void reduce_scatter(const void* send, void* recv, size_t count, DType d, ReduceOp op) override {
    std::vector<at::Tensor> full = {wrap(send, count * size_, d).clone()};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d_op(op);
    run("reduce_scatter", [&] { return group_->allreduce(full, options); });
    const int64_t block = static_cast<int64_t>(count);
    wrap(recv, count, d).copy_(full[0].narrow(0, rank_ * block, block));
  }
  void all_gather(const void* send, void* recv, size_t count, DType d) override {
    at::Tensor in = wrap(send, count, d);
    at::Tensor out = wrap(recv, count * size_, d);
    run("all_gather", [&] { return group_->_allgather_base(out, in); });
  }
  void broadcast(void* buffer, size_t count, DType d, int root) override {
    std::vector<at::Tensor> tensors = {wrap(buffer, count, d)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    run("broadcast", [&] { return group_->broadcast(tensors, options); });
  }
  void barrier() override {
    run("barrier", [&] { return group_->barrier(); });
  }

 private:
  void publish_progress() { store_->set(progress_key(rank_), std::to_string(collectives_)); }

  // Starts a collective and waits for it; a failure becomes one line naming the missing ranks.
  template <typename Start>
  void run(const char* what, Start start) {
    ++collectives_;
    const auto began = std::chrono::steady_clock::now();
    try {
      publish_progress();
      const c10::intrusive_ptr<c10d::Work> work = start();
      work->wait();
      release(work);
    } catch (const std::exception& e) {
      const double waited_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      throw std::runtime_error(
          fmt::format("{} (collective {}) failed on rank {} of {} after "
                      "{:.1f} s: {}; Gloo: {}",
                      what,
                      collectives_,
                      rank_,
                      size_,
                      waited_s,
                      missing_ranks(),
                      first_line(e)));
    }
  }

  // Gloo's worker thread lets go of a finished work, and of the tensors it holds, just after
  // wait() returns; waiting for that (at most 1 s) frees a collective's buffers by the time it
  // returns, as the engine's per-rank memory accounting expects.
  static void release(const c10::intrusive_ptr<c10d::Work>& work) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (work.use_count() > 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  }

  // Which ranks never reached this rank's current collective, as the store tells.
  std::string missing_ranks() {
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

  int rank_;
  int size_;
  double timeout_s_;
  int64_t collectives_ = 0;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> group_;
};

}  // namespace

std::unique_ptr<Communicator> make_gloo_communicator(const Rendezvous& rendezvous,
                                                     const WorldOptions& options) {
  return std::make_unique<GlooCommunicator>(rendezvous, options);
}

}  // namespace gpudays
