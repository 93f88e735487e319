#include "harness/run/timing.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>

#include "harness/core/error.h"

namespace nkbench {
namespace {

// Collects per-repetition results instead of printing them.
class CollectingReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) error = run.error_message;
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      seconds.push_back(run.real_accumulated_time / double(run.iterations));
    }
  }
  std::vector<double> seconds;
  std::string error;
};

void initializeBenchmarkOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    static char program[] = "nkbench";
    static char* argv[] = {program, nullptr};
    int argc = 1;
    benchmark::Initialize(&argc, argv);
  });
}

// The q-quantile of sorted values, interpolated linearly between ranks.
double quantile(const std::vector<double>& sorted, double q) {
  const double rank = q * double(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(rank);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (rank - double(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

TimingResult summarizeTimes(std::vector<double> seconds) {
  TimingResult result;
  if (seconds.empty()) return result;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  result.median_s = quantile(sorted, 0.5);
  result.iqr_s = quantile(sorted, 0.75) - quantile(sorted, 0.25);
  result.best_s = sorted.front();
  result.mean_s = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(n);
  double squares = 0.0;
  for (double s : sorted) squares += (s - result.mean_s) * (s - result.mean_s);
  result.stddev_s = n > 1 ? std::sqrt(squares / double(n - 1)) : 0.0;
  result.seconds = std::move(seconds);
  return result;
}

TimingResult timeKernel(const std::string& name, const std::function<void()>& body, const TimingOptions& options) {
  initializeBenchmarkOnce();
  // Warm caches, branch predictors and the core clock before the first repetition.
  const auto warmup_end = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.warmup_s);
  do body(); while (std::chrono::steady_clock::now() < warmup_end);

  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark(name.c_str(),
                               [&body](benchmark::State& state) {
                                 for (auto _ : state) body();
                               })
      ->Repetitions(std::max(1, options.repetitions))
      ->MinTime(options.min_time_s)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  if (!reporter.error.empty()) throw Error("timing " + name + ": " + reporter.error);
  if (reporter.seconds.empty()) throw Error("timing " + name + ": Google Benchmark returned no runs");
  return summarizeTimes(std::move(reporter.seconds));
}

}  // namespace nkbench
