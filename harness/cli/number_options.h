// Checks and conversions of the numeric options, shared by the commands and
// the option fuzz target (fuzz/fuzz_options.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace nkbench::cli {

// CLI11's PositiveNumber, NonNegativeNumber and Range compare with < and >,
// which "nan" passes and "inf" satisfies: `run --min-time nan` reached
// google/benchmark's MinTime check and aborted, `--threshold nan` turned the gate off.
// And their messages print DBL_MAX in 309 digits. One check, one short message:
// a finite number within [low, high] (above `low` where `low_open`).
inline CLI::Validator finiteNumberIn(double low, double high, bool low_open, const std::string& description,
                                     const std::string& wanted) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(text, value)) return "Value " + text + " is not a number";
        if (!std::isfinite(value)) return "Value " + text + " is not a finite number";
        if ((low_open ? value <= low : value < low) || value > high) return "Value " + text + " is not " + wanted;
        return "";
      },
      description);
}

// Each keeps the short description --help shows for it.
inline CLI::Validator positiveNumber() {
  return finiteNumberIn(0.0, std::numeric_limits<double>::max(), true, "POSITIVE", "above 0");
}
inline CLI::Validator fraction() { return finiteNumberIn(0.0, 1.0, false, "in [0 - 1]", "within 0 and 1"); }

// --cold-mib: up to 1 TiB, far past any last-level cache, and small enough
// that its bytes and the operand set count computed from them fit in int64.
inline constexpr double kMaxColdMib = 1048576;
inline CLI::Validator coldMib() {
  return finiteNumberIn(0.0, kMaxColdMib, false, "in [0 - 1048576]", "within 0 and 1048576");
}

// --case-timeout: up to a week, so that the deadline it sets (steady clock
// milliseconds) cannot overflow; 0 means no limit.
inline constexpr double kMaxCaseTimeoutSeconds = 7 * 24 * 3600;
inline CLI::Validator caseTimeout() {
  return finiteNumberIn(0.0, kMaxCaseTimeoutSeconds, false, "in [0 - 604800]", "within 0 and 604800 (a week)");
}

// --cold-mib in bytes, for a value coldMib() accepted; 0 stays 0 (the default span).
inline std::int64_t coldRotationBytes(double mib) { return static_cast<std::int64_t>(mib * 1024 * 1024); }

}  // namespace nkbench::cli
