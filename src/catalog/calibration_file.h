// The planner's fitted efficiency constants as data (configs/calibration.toml): each value with
// its physical bounds and its source. The reader and the writer; which names exist and what they
// set is plan/fitted_constants.h's, and the fit that writes the file is `gpudays validate --fit`.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gpudays {

class Catalog;

struct CalibrationValue {
  std::string name;  // a plan/fitted_constants.h name
  double value = 0.0;
  double min = 0.0;  // the physical bounds it was fitted within
  double max = 0.0;
  std::string source;  // e.g. "fitted on the fit half by `gpudays validate --fit`"
  bool operator==(const CalibrationValue&) const = default;
};

struct CalibrationFile {
  std::string path;    // empty when there is no file (uncalibrated)
  std::string method;  // how the values were obtained ([fit] method)
  std::vector<CalibrationValue> values;
  bool operator==(const CalibrationFile&) const = default;
};

// Reads one file; throws InputError naming the file, the constant and the key.
CalibrationFile load_calibration_file(const std::string& path);
// The file's text: `header` (comment lines, each ending in a newline), [fit], and each constant
// after the comment `meaning(name)`. load_calibration_file reads it back equal (but for `path`).
std::string calibration_file_text(const CalibrationFile& file,
                                  const std::string& header,
                                  const std::function<std::string(const std::string&)>& meaning);
// The catalog's own: <config dir>/calibration.toml, or an empty CalibrationFile when absent.
CalibrationFile load_calibration(const Catalog& catalog);

}  // namespace gpudays
