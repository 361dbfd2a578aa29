// AutocastScope: autocast's thread-local switches and nesting count, restored on exit.
#include "engine/autocast_scope.h"

#include <ATen/autocast_mode.h>

namespace gpudays {

at::ScalarType autocast_dtype(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return at::kBFloat16;
    case Precision::kFp16:
      return at::kHalf;
    case Precision::kFp32:
      break;
  }
  return at::kFloat;
}

AutocastScope::AutocastScope(c10::DeviceType device, Precision precision)
    : AutocastScope(device, precision != Precision::kFp32, autocast_dtype(precision)) {}

AutocastScope::AutocastScope(c10::DeviceType device, bool enabled, at::ScalarType dtype)
    : device_(device),
      was_enabled_(at::autocast::is_autocast_enabled(device)),
      was_dtype_(at::autocast::get_autocast_dtype(device)) {
  at::autocast::set_autocast_enabled(device_, enabled);
  if (enabled) at::autocast::set_autocast_dtype(device_, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, was_enabled_);
  at::autocast::set_autocast_dtype(device_, was_dtype_);
}

}  // namespace gpudays
