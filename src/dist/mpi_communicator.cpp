// The MPI engine (OpenMPI from Debian): collectives on CPU buffers over MPI_COMM_WORLD. 16-bit
// floating-point buffers travel as 2-byte elements and are reduced by user operations that
// accumulate in float. MPI is initialised once per process and finalised at exit.
#include <mpi.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "dist/communicator.h"
#include "dist/half.h"

namespace gpudays {
namespace {

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float), bool kMax>
void reduce_16bit(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = ToFloat(a[i]);
    const float y = ToFloat(b[i]);
    b[i] = FromFloat(kMax ? (x > y ? x : y) : x + y);
  }
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("MPI {} failed ({})", what, rc));
}

// Owns MPI's initialisation and the 16-bit types and operations; lives until the process exits.
class MpiSession {
 public:
  static MpiSession& get() {
    static MpiSession session;
    return session;
  }
  MPI_Datatype type(DType d) const {
    switch (d) {
      case DType::kFloat32:
        return MPI_FLOAT;
      case DType::kFloat64:
        return MPI_DOUBLE;
      case DType::kInt64:
        return MPI_INT64_T;
      case DType::kFloat16:
      case DType::kBFloat16:
        return half_type_;
    }
    return MPI_BYTE;
  }
  MPI_Op op(DType d, ReduceOp op) const {
    if (d == DType::kFloat16) return op == ReduceOp::kSum ? fp16_sum_ : fp16_max_;
    if (d == DType::kBFloat16) return op == ReduceOp::kSum ? bf16_sum_ : bf16_max_;
    return op == ReduceOp::kSum ? MPI_SUM : MPI_MAX;
  }

 private:
  MpiSession() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "init");
      owns_ = true;
    }
    MPI_Type_contiguous(2, MPI_BYTE, &half_type_);
    MPI_Type_commit(&half_type_);
    MPI_Op_create(&reduce_16bit<fp16_to_float, float_to_fp16, false>, 1, &fp16_sum_);
    MPI_Op_create(&reduce_16bit<fp16_to_float, float_to_fp16, true>, 1, &fp16_max_);
    MPI_Op_create(&reduce_16bit<bf16_to_float, float_to_bf16, false>, 1, &bf16_sum_);
    MPI_Op_create(&reduce_16bit<bf16_to_float, float_to_bf16, true>, 1, &bf16_max_);
  }
  ~MpiSession() {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (owns_ && !finalised) MPI_Finalize();
  }
  bool owns_ = false;
  MPI_Datatype half_type_ = MPI_DATATYPE_NULL;
  MPI_Op fp16_sum_, fp16_max_, bf16_sum_, bf16_max_;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() : session_(MpiSession::get()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return "mpi"; }

  void all_reduce(void* buffer, size_t count, DType d, ReduceOp op) override {
    check(MPI_Allreduce(MPI_IN_PLACE,
                        buffer,
                        static_cast<int>(count),
                        session_.type(d),
                        session_.op(d, op),
                        MPI_COMM_WORLD),
          "all_reduce");
  }
  void reduce_scatter(const void* send, void* recv, size_t count, DType d, ReduceOp op) override {
    check(MPI_Reduce_scatter_block(send,
                                   recv,
                                   static_cast<int>(count),
                                   session_.type(d),
                                   session_.op(d, op),
                                   MPI_COMM_WORLD),
          "reduce_scatter");
  }
  void all_gather(const void* send, void* recv, size_t count, DType d) override {
    check(MPI_Allgather(send,
                        static_cast<int>(count),
                        session_.type(d),
                        recv,
                        static_cast<int>(count),
                        session_.type(d),
                        MPI_COMM_WORLD),
          "all_gather");
  }
  void broadcast(void* buffer, size_t count, DType d, int root) override {
    check(MPI_Bcast(buffer, static_cast<int>(count), session_.type(d), root, MPI_COMM_WORLD),
          "broadcast");
  }
  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "barrier"); }

 private:
  MpiSession& session_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() {
  return std::make_unique<MpiCommunicator>();
}

bool mpi_available() {
  return true;
}

}  // namespace gpudays
