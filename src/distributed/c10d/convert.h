// What the c10d communicators share to speak c10d (internal to src/distributed/c10d): the tensor
// dtype of a DType, c10d's reduction of a ReduceOp, and seconds as c10d's milliseconds.
#pragma once

#include <c10/core/ScalarType.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "distributed/communicator.h"

namespace gpudays {

inline at::ScalarType scalar_type(DType d) {
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
  throw std::logic_error("c10d communicator: unknown DType");
}

inline c10d::ReduceOp c10d_op(ReduceOp op) {
  return op == ReduceOp::kSum ? c10d::ReduceOp::SUM : c10d::ReduceOp::MAX;
}

inline std::chrono::milliseconds milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace gpudays
