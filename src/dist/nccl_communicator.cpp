// The NCCL engine (CUDA builds): collectives on CUDA device buffers, one GPU per rank. The
// bootstrap communicator (Gloo; the single-process one for one rank) carries NCCL's unique id from
// rank 0. Collectives are queued on one CUDA stream, by default the legacy default stream:
// LibTorch's default stream is that same stream, so tensors written before a collective and read
// after it need no extra synchronisation. Callers that run their work on another stream (side
// streams, CUDA graph capture) pass it in NcclOptions. Host buffers (the engine's scalars) are
// staged through a device scratch buffer and are ready when the call returns. Torch-free.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "dist/communicator.h"

namespace gpudays {
namespace {

void check_cuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    throw std::runtime_error(
        fmt::format("NCCL communicator: CUDA {} failed: {}", what, cudaGetErrorString(rc)));
  }
}

ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kInt64:
      return ncclInt64;
  }
  throw std::logic_error("NCCL communicator: unknown DType");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  return op == ReduceOp::kSum ? ncclSum : ncclMax;
}

// Makes `device` current for a scope and restores the caller's device.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

bool is_host_pointer(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // clear: an unknown pointer is host memory
    return true;
  }
  return attr.type == cudaMemoryTypeUnregistered || attr.type == cudaMemoryTypeHost;
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Communicator& bootstrap, const NcclOptions& options)
      : device_(options.cuda_device),
        stream_(static_cast<cudaStream_t>(options.cuda_stream)),
        rank_(bootstrap.rank()),
        size_(bootstrap.size()) {
    ncclUniqueId id{};
    if (rank_ == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    static_assert(sizeof(id) % sizeof(int64_t) == 0);
    bootstrap.broadcast(&id, sizeof(id) / sizeof(int64_t), DType::kInt64, /*root=*/0);
    const DeviceScope scope(device_);
    check(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }
  ~NcclCommunicator() override {
    if (scratch_ != nullptr) cudaFree(scratch_);
    if (comm_ != nullptr) ncclCommDestroy(comm_);
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return "nccl"; }

  void all_reduce(void* buffer, size_t count, DType d, ReduceOp op) override {
    const DeviceScope scope(device_);
    Staged io(*this, buffer, count * dtype_bytes(d), /*offset=*/0);
    check(ncclAllReduce(io.device, io.device, count, nccl_type(d), nccl_op(op), comm_, stream_),
          "all_reduce");
    io.copy_back();
  }
  void reduce_scatter(const void* send, void* recv, size_t count, DType d, ReduceOp op) override {
    const DeviceScope scope(device_);
    const size_t recv_bytes = count * dtype_bytes(d);
    reserve_staging(send, recv, recv_bytes * (size_ + 1));
    Staged in(*this, const_cast<void*>(send), recv_bytes * size_, /*offset=*/0);
    Staged out(*this, recv, recv_bytes, /*offset=*/recv_bytes * size_);
    check(
        ncclReduceScatter(in.device, out.device, count, nccl_type(d), nccl_op(op), comm_, stream_),
        "reduce_scatter");
    out.copy_back();
  }
  void all_gather(const void* send, void* recv, size_t count, DType d) override {
    const DeviceScope scope(device_);
    const size_t send_bytes = count * dtype_bytes(d);
    reserve_staging(send, recv, send_bytes * (size_ + 1));
    Staged in(*this, const_cast<void*>(send), send_bytes, /*offset=*/0);
    Staged out(*this, recv, send_bytes * size_, /*offset=*/send_bytes);
    check(ncclAllGather(in.device, out.device, count, nccl_type(d), comm_, stream_), "all_gather");
    out.copy_back();
  }
  void broadcast(void* buffer, size_t count, DType d, int root) override {
    const DeviceScope scope(device_);
    Staged io(*this, buffer, count * dtype_bytes(d), /*offset=*/0);
    check(ncclBroadcast(io.device, io.device, count, nccl_type(d), root, comm_, stream_),
          "broadcast");
    io.copy_back();
  }
  // NCCL has no barrier: an all-reduce of one element, waited for on the host.
  void barrier() override {
    const DeviceScope scope(device_);
    void* one = scratch(sizeof(float));
    check(ncclAllReduce(one, one, 1, ncclFloat32, ncclSum, comm_, stream_), "barrier");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  // A caller's buffer as NCCL sees it: device buffers as they are; host buffers copied into the
  // scratch buffer at `offset` (in bytes) and, with copy_back(), out again once NCCL is done.
  struct Staged {
    Staged(NcclCommunicator& c, void* buffer, size_t bytes, size_t offset)
        : comm(c), host(is_host_pointer(buffer) ? buffer : nullptr), bytes(bytes), device(buffer) {
      if (host == nullptr) return;
      device = static_cast<char*>(comm.scratch(offset + bytes)) + offset;
      check_cuda(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, comm.stream_),
                 "cudaMemcpyAsync (to the device)");
    }
    void copy_back() {
      if (host == nullptr) return;
      check_cuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, comm.stream_),
                 "cudaMemcpyAsync (to the host)");
      check_cuda(cudaStreamSynchronize(comm.stream_), "cudaStreamSynchronize");
    }
    NcclCommunicator& comm;
    void* host;
    size_t bytes;
    void* device;
  };

  // Sizes the scratch buffer for both of a collective's buffers before either is staged (growing
  // it would drop what was staged first).
  void reserve_staging(const void* send, const void* recv, size_t bytes) {
    if (is_host_pointer(send) || is_host_pointer(recv)) scratch(bytes);
  }

  // At least `bytes` of device memory, kept for the communicator's lifetime (grown on demand).
  void* scratch(size_t bytes) {
    if (bytes <= scratch_bytes_) return scratch_;
    if (scratch_ != nullptr) {
      check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      check_cuda(cudaFree(scratch_), "cudaFree");
      scratch_ = nullptr;
      scratch_bytes_ = 0;
    }
    check_cuda(cudaMalloc(&scratch_, bytes), "cudaMalloc (staging buffer)");
    scratch_bytes_ = bytes;
    return scratch_;
  }

  void check(ncclResult_t rc, const char* what) const {
    if (rc == ncclSuccess) return;
    const char* detail = comm_ != nullptr ? ncclGetLastError(comm_) : ncclGetLastError(nullptr);
    throw std::runtime_error(fmt::format("NCCL {} failed on rank {} of {} (CUDA device {}): {}{}{}",
                                         what,
                                         rank_,
                                         size_,
                                         device_,
                                         ncclGetErrorString(rc),
                                         detail != nullptr && *detail != '\0' ? ": " : "",
                                         detail != nullptr ? detail : ""));
  }

  int device_;
  cudaStream_t stream_;
  int rank_;
  int size_;
  ncclComm_t comm_ = nullptr;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap,
                                                     const NcclOptions& options) {
  return std::make_unique<NcclCommunicator>(bootstrap, options);
}

bool nccl_available() {
  return true;
}

}  // namespace gpudays
