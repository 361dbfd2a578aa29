// The NCCL engine (CUDA builds): the communicator interface over c10d's ProcessGroupNCCL, on CUDA
// buffers wrapped as tensors without copies. c10d runs each collective on its own NCCL stream,
// after an event wait on the caller's current stream; wait() makes the current stream wait for
// the collective's end event, so the call returns before the collective finishes and later work on
// the current stream is ordered after it (as LibTorch's DDP sees it). Host buffers (the engine's
// scalars) are staged through the rank's device and hold the result on return. A rank that hangs
// or dies is c10d's watchdog's to handle: after the collective timeout it aborts the communicator
// and ends the process (TORCH_NCCL_ASYNC_ERROR_HANDLING), which the benchmark records as a crash.
#include <ATen/ops/from_blob.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <chrono>
#include <exception>
#include <string>

#include "distributed/c10d/convert.h"
#include "distributed/c10d/ledger.h"
#include "distributed/c10d/store.h"
#include "distributed/world.h"

namespace gpudays {
namespace {

bool on_device(const void* buffer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, buffer) != cudaSuccess) {
    cudaGetLastError();  // a plain host pointer on older runtimes: clear the error
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

class NcclGroupCommunicator final : public Communicator {
 public:
  NcclGroupCommunicator(const c10::intrusive_ptr<c10d::Store>& store,
                        int rank,
                        int size,
                        int cuda_device,
                        const WorldOptions& options)
      : rank_(rank),
        size_(size),
        device_(at::kCUDA, static_cast<c10::DeviceIndex>(cuda_device)),
        ledger_(store, rank, size, "NCCL", LedgerPublish::kInBackground) {
    auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
    nccl_options->timeout = milliseconds(options.collective_timeout_s);
    auto nccl_store = c10::make_intrusive<c10d::PrefixStore>("nccl/", store);
    const c10::cuda::CUDAGuard guard(device_);
    group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(nccl_store, rank, size, nccl_options);
    // As init_process_group(device_id=...): the group is bound to this rank's GPU and its NCCL
    // communicator is made now, on that device, not lazily on whichever device is current then.
    group_->setBoundDeviceId(device_);
    group_->eagerConnectSingleDevice(device_);
  }

  // An orderly end after a clean run: NCCL's communicators are finalised before the process exits
  // (without it c10d warns that the group was never shut down). After a failed collective, or
  // while an error unwinds, the communicators are aborted instead: finalising waits for
  // collectives that peers will never join.
  ~NcclGroupCommunicator() override {
    try {
      if (ledger_.failed() || std::uncaught_exceptions() > 0) {
        group_->abort();
      } else {
        group_->shutdown();
      }
    } catch (const std::exception&) {  // the process is ending; the watchdog reports failures
    }
  }
  NcclGroupCommunicator(const NcclGroupCommunicator&) = delete;
  NcclGroupCommunicator& operator=(const NcclGroupCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return "nccl"; }

  void all_reduce(void* buffer, size_t count, DType d, ReduceOp op) override {
    staged(buffer, count, d, [&](at::Tensor& t) {
      std::vector<at::Tensor> tensors = {t};
      c10d::AllreduceOptions o;
      o.reduceOp = c10d_op(op);
      run("all_reduce", [&] { return group_->allreduce(tensors, o); });
    });
  }
  void reduce_scatter(const void* send, void* recv, size_t count, DType d, ReduceOp op) override {
    at::Tensor in = on_device_copy(wrap(send, count * size_, d));
    staged(recv, count, d, [&](at::Tensor& out) {
      c10d::ReduceScatterOptions o;
      o.reduceOp = c10d_op(op);
      run("reduce_scatter", [&] { return group_->_reduce_scatter_base(out, in, o); });
    });
  }
  void all_gather(const void* send, void* recv, size_t count, DType d) override {
    at::Tensor in = on_device_copy(wrap(send, count, d));
    staged(recv, count * size_, d, [&](at::Tensor& out) {
      run("all_gather", [&] { return group_->_allgather_base(out, in); });
    });
  }
  void broadcast(void* buffer, size_t count, DType d, int root) override {
    staged(buffer, count, d, [&](at::Tensor& t) {
      std::vector<at::Tensor> tensors = {t};
      c10d::BroadcastOptions o;
      o.rootRank = root;
      run("broadcast", [&] { return group_->broadcast(tensors, o); });
    });
  }
  void barrier() override {
    c10d::BarrierOptions o;
    o.device_ids = {device_.index()};
    run("barrier", [&] { return group_->barrier(o); });
  }

 private:
  // A buffer as a flat tensor where it lives (no copy; the caller keeps it alive).
  at::Tensor wrap(const void* buffer, size_t count, DType d) const {
    const bool device = on_device(buffer);
    return at::from_blob(
        const_cast<void*>(buffer),
        {static_cast<int64_t>(count)},
        at::TensorOptions().dtype(scalar_type(d)).device(device ? device_ : at::Device(at::kCPU)));
  }

  // A read-only input on the device: as it is, or a device copy of a host buffer.
  at::Tensor on_device_copy(const at::Tensor& t) const { return t.is_cuda() ? t : t.to(device_); }

  // Runs `collective` on the buffer as a device tensor: a device buffer as it is; a host buffer
  // copied to the device and back, so that it holds the result on return.
  template <typename Collective>
  void staged(void* buffer, size_t count, DType d, Collective collective) {
    const c10::cuda::CUDAGuard guard(device_);
    at::Tensor t = wrap(buffer, count, d);
    if (t.is_cuda()) return collective(t);
    at::Tensor on_device = t.to(device_);
    collective(on_device);
    t.copy_(on_device);  // after the current stream's wait for the collective: synchronous
  }

  template <typename Start>
  void run(const char* what, Start start) {
    ledger_.run(what, start, [](const c10::intrusive_ptr<c10d::Work>& work) { work->wait(); });
  }

  int rank_;
  int size_;
  at::Device device_;
  CollectiveLedger ledger_;
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
};

}  // namespace

bool nccl_available() {
  return true;
}

std::unique_ptr<Communicator> make_nccl_communicator(const Rendezvous& rendezvous,
                                                     int cuda_device,
                                                     const WorldOptions& options) {
  const int size = rendezvous.ranks.world_size;
  c10::intrusive_ptr<c10d::Store> store;
  if (size == 1) {
    store = c10::make_intrusive<c10d::HashStore>();
  } else {
    store = open_store(rendezvous, milliseconds(options.rendezvous_timeout_s));
  }
  return std::make_unique<NcclGroupCommunicator>(
      store, rendezvous.ranks.rank, size, cuda_device, options);
}

}  // namespace gpudays
