// Formatting of bytes, counts and durations for tables and messages.
#include "common/units.h"

#include <cmath>

#include <fmt/format.h>

namespace gpudays {

std::string format_gib(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / kGiB);
}

std::string format_count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string format_si(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e12) return fmt::format("{:.3g}T", value / 1e12);
  if (magnitude >= 1e9) return fmt::format("{:.3g}B", value / 1e9);
  if (magnitude >= 1e6) return fmt::format("{:.3g}M", value / 1e6);
  if (magnitude >= 1e3) return fmt::format("{:.3g}k", value / 1e3);
  return fmt::format("{:.3g}", value);
}

std::string format_duration_s(double seconds) {
  if (seconds < 1.0) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 120.0) return fmt::format("{:.2f} s", seconds);
  if (seconds < 2 * 3600.0) return fmt::format("{:.1f} min", seconds / 60.0);
  if (seconds < 2 * kSecondsPerDay) return fmt::format("{:.1f} h", seconds / 3600.0);
  return fmt::format("{:.1f} days", seconds / kSecondsPerDay);
}

}  // namespace gpudays
