// Names of the catalog enums, and their parsing with errors that list the valid choices.
#include "catalog/model_spec.h"

#include <fmt/format.h>

#include "catalog/family_traits.h"
#include "common/error.h"

namespace gpudays {

std::string to_string(Family family) {
  return std::string(family_traits(family).name);
}

std::string to_string(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
  }
  return "?";
}

std::string to_string(OptimizerKind optimizer) {
  return optimizer == OptimizerKind::kAdam ? "adam" : "adamw";
}

std::string to_string(ScheduleKind schedule) {
  switch (schedule) {
    case ScheduleKind::kCosine:
      return "cosine";
    case ScheduleKind::kLinear:
      return "linear";
    case ScheduleKind::kConstant:
      return "constant";
    case ScheduleKind::kWsd:
      return "wsd";
  }
  return "?";
}

Family parse_family(const std::string& text) {
  for (const FamilyTraits& f : all_family_traits()) {
    if (f.name == text) return f.family;
  }
  throw InputError(
      fmt::format("unknown family '{}'; valid: {}", text, join_choices(family_names())));
}

Precision parse_precision(const std::string& text) {
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kBf16}) {
    if (to_string(p) == text) return p;
  }
  throw InputError(fmt::format("unknown precision '{}'; valid: fp32, fp16 or bf16", text));
}

bool is_vision(Family family) {
  return family_traits(family).modality == Modality::kImage;
}

}  // namespace gpudays
