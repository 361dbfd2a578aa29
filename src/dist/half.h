// IEEE-754 binary16 and bfloat16 conversions to and from float, for reductions of 16-bit buffers
// by engines (MPI) that have no 16-bit floating-point types. Round to nearest even.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpudays {

inline float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu)) return 0x7fc0;  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float fp16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);

}  // namespace gpudays
