// Fuzz target: the command line's number parsing. The input is an argument list, one argument a
// line, parsed by the real command set (every subcommand with its options, ranges and checks, as
// main.cpp builds it) but stopped once parsing and validation are done, before any command runs;
// the first line is also given to the shared number check (number_check) and the
// price parser (add_price_assignment) directly. A bug is any escape other than CLI11's parse errors
// and InputError, any sanitizer report, an accepted number option whose value is not what it reads
// as (an integer not plainly decimal or past its type, a real not plainly decimal or not finite),
// or a number check that accepts a value outside its range, or a negative or non-finite price.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/cost_options.h"
#include "cost/prices.h"
#include "fuzz_util.h"

namespace {

struct ParsedOnly {};  // thrown once parsing is done, instead of running the command

// Whether `value` is a decimal integer of type T that CLI11 reads as the same number.
template <typename T>
bool plain_integer(const std::string& value) {
  T v{};
  T read{};
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  return ec == std::errc() && p == value.data() + value.size() &&
         CLI::detail::lexical_cast(value, read) && v == read;
}

// Whether `value` is a finite decimal number: an optional minus, digits with at most one point,
// an optional exponent; nothing else (no hexadecimal, no "inf" or "nan").
bool plain_real(const std::string& value) {
  size_t i = value.rfind('-', 0) == 0 ? 1 : 0;
  size_t digits = 0;
  bool point = false;
  for (; i < value.size() &&
         (std::isdigit(static_cast<unsigned char>(value[i])) || (value[i] == '.' && !point));
       ++i) {
    if (value[i] == '.')
      point = true;
    else
      ++digits;
  }
  if (digits == 0) return false;
  if (i < value.size() && (value[i] == 'e' || value[i] == 'E')) {
    ++i;
    if (i < value.size() && (value[i] == '-' || value[i] == '+')) ++i;
    const size_t exponent_start = i;
    while (i < value.size() && std::isdigit(static_cast<unsigned char>(value[i]))) ++i;
    if (i == exponent_start) return false;
  }
  return i == value.size() && std::isfinite(std::strtod(value.c_str(), nullptr));
}

// An accepted numeric option's every value must be what it reads as: an integer option's a decimal
// integer within its type (not a saturated, octal or hexadecimal reading), a real option's a
// finite number.
void check_numbers(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0) continue;
    const std::string type = opt->get_type_name().substr(0, opt->get_type_name().find(':'));
    for (const std::string& value : opt->results()) {
      if ((type == "INT" && !plain_integer<int64_t>(value)) ||
          (type == "UINT" && !plain_integer<uint64_t>(value))) {
        gpudays::fuzz::fail(opt->get_name() + " accepted '" + value + "' as an integer");
      }
      if (type == "FLOAT" && !plain_real(value)) {
        gpudays::fuzz::fail(opt->get_name() + " accepted '" + value + "' as a number");
      }
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) check_numbers(*sub);
}

void parse_command_line(const std::vector<std::string>& args) {
  using namespace gpudays;
  static const GlobalOptions global;  // the commands keep a reference to it
  CLI::App app{"gpudays"};
  app.require_subcommand(1);
  app.fallthrough();
  std::string config_dir;
  app.add_option("--config-dir", config_dir, "");
  add_catalog_commands(app, global);
  add_plan_command(app, global);
  add_results_commands(app, global);
  add_bench_command(app, global);
  add_cost_command(app, global);
  add_report_command(app, global);
  check_number_options(app);
  // The root's parse-complete callback runs after every option is converted and checked, before
  // any subcommand's callback.
  app.parse_complete_callback([] { throw ParsedOnly{}; });
  std::vector<const char*> argv = {"gpudays"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const ParsedOnly&) {
    check_numbers(app);
  } catch (const CLI::ParseError&) {  // also --help and --version
  }
}

void check_number(const std::string& text, double low, double high, bool low_open) {
  std::string value = text;
  if (!gpudays::number_check(low, high, low_open)(value).empty()) return;
  const double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v) || (low_open ? v <= low : v < low) || v > high) {
    gpudays::fuzz::fail("number_check accepted '" + text + "', outside its range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  size_t start = 0;
  while (start <= text.size() && args.size() < 64) {
    const size_t end = std::min(text.find('\n', start), text.size());
    args.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  fuzz::accepts([&] { parse_command_line(args); });
  check_number(args.front(), 0.0, 100.0, /*low_open=*/false);
  check_number(args.front(), 0.0, 1.0, /*low_open=*/true);
  fuzz::accepts([&] {
    std::map<std::string, PriceOverride> prices;
    add_price_assignment(args.front(), "--price", prices);
    for (const auto& [name, price] : prices) {
      if (!std::isfinite(price.value) || price.value < 0.0) {
        fuzz::fail("add_price_assignment accepted a negative or non-finite price");
      }
    }
  });
  return 0;
}
