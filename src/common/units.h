// Unit constants and human-readable formatting of bytes, counts and durations.
#pragma once

#include <cstdint>
#include <string>

namespace gpudays {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kSecondsPerDay = 86400.0;

std::string format_gib(double bytes);           // "93.1 GiB"
std::string format_count(int64_t n);            // "1,011,781,632"
std::string format_si(double value);            // "1.01B", "162M", "34.4k"
std::string format_duration_s(double seconds);  // "412 ms", "3.2 s", "17.6 days"

}  // namespace gpudays
