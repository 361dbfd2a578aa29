// The Gloo engine: the communicator interface over c10d's ProcessGroupGloo, on CPU buffers wrapped
// as tensors without copies. Gloo reduces fp32, fp64, fp16, bf16 and int64 itself (16-bit sums in
// float, rounded once per step, as the MPI engine's own operators did), so no type is converted.
// Each rank counts its collectives in the store; when one fails, the ranks behind are named
// (ledger.h).
#include <ATen/ops/from_blob.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "distributed/c10d/convert.h"
#include "distributed/c10d/ledger.h"
#include "distributed/c10d/store.h"
#include "distributed/world.h"

namespace gpudays {
namespace {

// A caller's buffer as a flat CPU tensor (no copy; the caller keeps it alive during the call).
at::Tensor wrap(const void* buffer, size_t count, DType d) {
  return at::from_blob(const_cast<void*>(buffer),
                       {static_cast<int64_t>(count)},
                       at::TensorOptions().dtype(scalar_type(d)));
}

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(const c10::intrusive_ptr<c10d::Store>& store,
                   const Rendezvous& r,
                   const WorldOptions& options)
      : rank_(r.ranks.rank), size_(r.ranks.world_size), ledger_(store, rank_, size_, "Gloo") {
    auto gloo_options =
        c10d::ProcessGroupGloo::Options::create_default(milliseconds(options.collective_timeout_s));
    auto gloo_store = c10::make_intrusive<c10d::PrefixStore>("gloo/", store);
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
  // Starts a collective and waits for it; a failure becomes one line naming the missing ranks.
  template <typename Start>
  void run(const char* what, Start start) {
    ledger_.run(what, start, [](const c10::intrusive_ptr<c10d::Work>& work) {
      work->wait();
      release(work);
    });
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

  int rank_;
  int size_;
  CollectiveLedger ledger_;
  c10::intrusive_ptr<c10d::Backend> group_;
};

}  // namespace

std::unique_ptr<Communicator> make_gloo_communicator(const c10::intrusive_ptr<c10d::Store>& store,
                                                     const Rendezvous& rendezvous,
                                                     const WorldOptions& options) {
  return std::make_unique<GlooCommunicator>(store, rendezvous, options);
}

std::unique_ptr<Communicator> make_gloo_communicator(const Rendezvous& rendezvous,
                                                     const WorldOptions& options) {
  try {
    const c10::intrusive_ptr<c10d::Store> store =
        open_store(rendezvous, milliseconds(options.rendezvous_timeout_s));
    await_every_rank(*store, rendezvous, options);  // else Gloo waits out the collective timeout
    return make_gloo_communicator(store, rendezvous, options);
  } catch (const c10::Error& e) {  // a rank that never arrives: a timeout, not a stack trace
    throw EnvironmentError(rendezvous_failure(rendezvous, options, e));
  }
}

}  // namespace gpudays
