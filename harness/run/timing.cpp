#include "harness/run/timing.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/statistics.h"

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
      iterations.push_back(run.iterations);
    }
  }
  std::vector<double> seconds;
  std::vector<std::int64_t> iterations;
  std::string error;
};

void initializeBenchmarkOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Google Benchmark takes its flags' defaults from BENCHMARK_* variables
    // when it loads: a filter, a warm-up, repetitions interleaved or aggregated,
    // or an output file there would change or break what nkbench times. These
    // arguments put its defaults back; the rest is set per benchmark below.
    static char program[] = "nkbench";
    static std::array kArguments = {
        std::string("--benchmark_list_tests=false"),         std::string("--benchmark_filter=."),
        std::string("--benchmark_min_warmup_time=0"),        std::string("--benchmark_repetitions=1"),
        std::string("--benchmark_enable_random_interleaving=false"),
        std::string("--benchmark_report_aggregates_only=false"),
        std::string("--benchmark_display_aggregates_only=false"),
        std::string("--benchmark_out="),                     std::string("--benchmark_perf_counters="),
        std::string("--benchmark_format=console"),           std::string("--benchmark_color=false"),
        std::string("--benchmark_counters_tabular=false")};
    static std::vector<char*> argv{program};
    for (std::string& argument : kArguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    int argc = int(argv.size()) - 1;
    benchmark::Initialize(&argc, argv.data());
  });
}

}  // namespace

TimingResult summarizeTimes(std::vector<double> seconds) {
  TimingResult result;
  if (seconds.empty()) return result;
  result.median_s = median(seconds);
  result.iqr_s = quantile(seconds, 0.75) - quantile(seconds, 0.25);
  result.best_s = *std::min_element(seconds.begin(), seconds.end());
  result.mean_s = mean(seconds);
  result.stddev_s = sampleStddev(seconds);
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
  TimingResult result = summarizeTimes(std::move(reporter.seconds));
  result.iterations = std::move(reporter.iterations);
  return result;
}

}  // namespace nkbench
