// Formatting of money, energy and CO2 amounts.
#include "cost/cost_format.h"

#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"

namespace gpudays {
namespace {

// "-0", "-0.00": an amount that rounds to zero from below prints as zero.
std::string without_negative_zero(std::string text) {
  if (text.rfind('-', 0) == 0 && text.find_first_not_of("0.", 1) == std::string::npos) {
    text.erase(0, 1);
  }
  return text;
}

// The amount itself, or InputError when it cannot be printed as a sensible number.
double printable(double amount, const char* unit) {
  if (std::isfinite(amount) && std::fabs(amount) <= kMaxFormattedAmount) return amount;
  throw InputError(
      fmt::format("an amount of {:.3g} {} is not a finite number within +-{:g} (it "
                  "comes from out-of-range inputs)",
                  amount,
                  unit,
                  kMaxFormattedAmount));
}

}  // namespace

std::string format_dollars(double usd) {
  usd = printable(usd, "USD");
  if (std::fabs(usd) < 10.0) return without_negative_zero(fmt::format("{:.2f}", usd));
  return format_count(std::llround(usd));
}

std::string format_usd(double usd) {
  return "$" + format_dollars(usd);
}

std::string format_usd_or_na(std::optional<double> usd) {
  return usd ? format_usd(*usd) : "n/a";
}

std::string format_kwh(double kwh) {
  kwh = printable(kwh, "kWh");
  if (kwh >= 1e6) return fmt::format("{:.1f} GWh", kwh / 1e6);
  if (kwh >= 1e4) return fmt::format("{:.1f} MWh", kwh / 1e3);
  return without_negative_zero(fmt::format("{:.0f}", kwh)) + " kWh";
}

std::string format_co2_kg(double kg) {
  kg = printable(kg, "kg CO2");
  if (kg >= 1e4) return fmt::format("{:.1f} t", kg / 1e3);
  return without_negative_zero(fmt::format("{:.0f}", kg)) + " kg";
}

}  // namespace gpudays
