// A one-line progress bar with ETA on stderr for long runs; silent when stderr
// is not a terminal (logs and pipes get the final report only).
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>
#include <ostream>
#include <string>

namespace nkbench {

// "[#####-----] 12/40 brgemm-64x64x64-b16 mlir: verify  1m05s left", cut to `width`
// columns. The estimate extrapolates the time per step done, and stops at
// `time_limit_s` of elapsed time where the work is bounded by one (a tuning
// budget, which a class started may overrun: then "0s left"); before the first
// step without a limit there is none ("ETA ?").
std::string formatProgressLine(std::size_t done, std::size_t total, const std::string& activity,
                               double elapsed_s, std::size_t width,
                               double time_limit_s = std::numeric_limits<double>::infinity());

class ProgressBar {
 public:
  // Shown only when `enabled` and stderr is a terminal.
  ProgressBar(std::size_t total_cases, bool enabled);
  ~ProgressBar();  // clears the line
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void show(const std::string& activity);  // redraws the line for the current case
  void caseDone();
  // Steps counted in the total that will not run (a tuning stage its budget cut).
  void dropSteps(std::size_t steps);
  // The work ends by this many seconds after the bar started (a tuning budget).
  void limitTime(double seconds) { time_limit_s_ = seconds; }
  // Prints a message on its own line without breaking the bar.
  void message(const std::string& text);

 private:
  void clear();
  bool visible_;
  std::size_t total_, done_ = 0;
  std::string activity_;
  double time_limit_s_ = std::numeric_limits<double>::infinity();
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace nkbench
