// Times a kernel with Google Benchmark, registered programmatically.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nkbench {

struct TimingOptions {
  int repetitions = 5;
  double min_time_s = 0.1;  // per repetition
  double warmup_s = 0.02;   // untimed calls before each timing, to bring caches back
};

struct TimingResult {
  std::vector<double> seconds;  // per call, one entry per repetition
  std::vector<std::int64_t> iterations;  // calls timed in each repetition (timeKernel only)
  double median_s = 0.0;
  double best_s = 0.0;
  double mean_s = 0.0;
  double stddev_s = 0.0;
  double iqr_s = 0.0;  // interquartile range (linear interpolation between ranks)
};

// Runs `body` in Google Benchmark's loop (wall-clock time) and returns per-call
// times of each repetition. Throws nkbench::Error when Google Benchmark reports an error.
TimingResult timeKernel(const std::string& name, const std::function<void()>& body, const TimingOptions& options);

// Median, best, mean, standard deviation and interquartile range of per-call times.
TimingResult summarizeTimes(std::vector<double> seconds);

}  // namespace nkbench
