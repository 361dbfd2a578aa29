// Human-readable money, energy and mass for cost tables and the report: "$4,100", "$0.42",
// "1.2 MWh", "3.4 t". Machine formats (CSV, JSON) keep raw numbers.
#pragma once

#include <optional>
#include <string>

namespace gpudays {

// Never "-0": an amount that rounds to zero prints as zero, whatever its sign. An amount that is
// not finite or beyond +-kMaxFormattedAmount throws InputError instead of printing an overflowed
// integer or "inf" (the cost analysis refuses the inputs that lead to one first).
inline constexpr double kMaxFormattedAmount = 1.0e15;
std::string format_dollars(double usd);                   // "127,500"; cents below 10
std::string format_usd(double usd);                       // "$127,500"; cents below $10
std::string format_usd_or_na(std::optional<double> usd);  // "n/a" when absent
std::string format_kwh(double kwh);                       // "830 kWh", "12.3 MWh"
std::string format_co2_kg(double kg);                     // "52 kg", "3.4 t"

}  // namespace gpudays
