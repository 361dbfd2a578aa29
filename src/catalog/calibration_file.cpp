// Reading and writing configs/calibration.toml: [fit] says how the values were obtained, one
// [[constants]] table per value.
#include "catalog/calibration_file.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "catalog/catalog.h"
#include "catalog/toml_document.h"
#include "catalog/toml_fields.h"
#include "common/error.h"

namespace gpudays {
namespace {

// A TOML basic string.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The shortest of %g and the exact shortest form that reads back as `value`.
std::string number(double value) {
  const std::string short_form = fmt::format("{:g}", value);
  return std::stod(short_form) == value ? short_form : fmt::format("{}", value);
}

double finite(const TomlFields& t, const char* key) {
  const double v = t.get_double(key);
  if (!std::isfinite(v)) t.fail(key, "must be a finite number");
  return v;
}

CalibrationValue read_value(const TomlFields& t) {
  CalibrationValue v;
  v.name = t.get_string("name");
  v.value = finite(t, "value");
  v.min = finite(t, "min");
  v.max = finite(t, "max");
  v.source = t.get_string("source");
  t.check_all_used("docs/planner.md");
  if (!(v.min <= v.value && v.value <= v.max)) {
    t.fail("value", fmt::format("{} is outside [{}, {}]", v.value, v.min, v.max));
  }
  return v;
}

}  // namespace

CalibrationFile load_calibration_file(const std::string& path) {
  const auto document = parse_toml_document(path);
  const auto owner = std::static_pointer_cast<const void>(document);
  for (auto&& [key, value] : *document) {
    if (key.str() != "fit" && key.str() != "constants") {
      throw InputError(fmt::format("{}: {}: unknown key (see docs/planner.md)", path, key.str()));
    }
  }
  CalibrationFile file;
  file.path = path;
  const toml::table* fit = (*document)["fit"].as_table();
  if (fit == nullptr) throw InputError(fmt::format("{}: [fit]: missing table", path));
  const TomlFields fit_fields(*fit, path + " [fit]", owner);
  file.method = fit_fields.get_string("method");
  fit_fields.check_all_used("docs/planner.md");
  const toml::array* constants = (*document)["constants"].as_array();
  if (constants == nullptr || !constants->is_array_of_tables()) {
    throw InputError(fmt::format("{}: constants: missing (one [[constants]] table each)", path));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < constants->size(); ++i) {
    const toml::table& table = *constants->get(i)->as_table();
    const auto name = table["name"].value<std::string>();
    const std::string context = name ? fmt::format("{} constant '{}'", path, *name)
                                     : fmt::format("{} constants[{}]", path, i);
    CalibrationValue v = read_value(TomlFields(table, context, owner));
    if (!names.insert(v.name).second) {
      throw InputError(fmt::format("{}: name: '{}' is given twice", context, v.name));
    }
    file.values.push_back(std::move(v));
  }
  return file;
}

CalibrationFile load_calibration(const Catalog& catalog) {
  const std::string path = catalog.config_dir() + "/calibration.toml";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return load_calibration_file(path);
}

std::string calibration_file_text(const CalibrationFile& file,
                                  const std::string& header,
                                  const std::function<std::string(const std::string&)>& meaning) {
  std::string text = header + "\n[fit]\nmethod = " + quoted(file.method) + "\n";
  for (const CalibrationValue& v : file.values) {
    text += fmt::format("\n# {}\n[[constants]]\nname = {}\nvalue = {}\nmin = {}\nmax = {}\n",
                        meaning(v.name),
                        quoted(v.name),
                        number(v.value),
                        number(v.min),
                        number(v.max));
    text += "source = " + quoted(v.source) + "\n";
  }
  return text;
}

}  // namespace gpudays
