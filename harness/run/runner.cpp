#include "harness/run/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>

#include "harness/core/error.h"
#include "harness/host/cache_info.h"
#include "harness/host/clock.h"
#include "harness/host/omp_threads.h"
#include "harness/host/peak.h"
#include "harness/host/pinning.h"
#include "harness/report/atomic_file.h"
#include "harness/report/csv_writer.h"
#include "harness/report/json/gbench_json_writer.h"
#include "harness/report/json/json_writer.h"
#include "harness/run/case_runner.h"
#include "harness/run/interrupt.h"
#include "harness/run/isolation/isolated_case.h"
#include "harness/run/operand_sets.h"
#include "harness/run/progress.h"
#include "harness/run/run_metadata.h"
#include "harness/tune/tuning_selection.h"
#include "kernels/mlir/jit/kernel_cache.h"
#include "kernels/registry.h"
#include "operands/bf16.h"
#include "operands/c_operand.h"
#include "reference/compare.h"
#include "reference/reference_gemm.h"

namespace nkbench {
namespace {


std::vector<std::unique_ptr<Backend>> createBackends(const std::vector<std::string>& names,
                                                    const BackendConfig& config) {
  std::vector<std::unique_ptr<Backend>> backends;
  for (const std::string& name : names) backends.push_back(createBackend(name, config));
  return backends;
}

// A backend named twice would give two rows of one key, which compare and merge refuse.
void requireDistinctBackends(const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::find(names.begin(), names.begin() + std::ptrdiff_t(i), names[i]) != names.begin() + std::ptrdiff_t(i))
      throw Error(fmt::format("--backends names {} twice", names[i]));
}

// Two reports in one file would leave the last one only, and a report over the
// suite would destroy it: refused before anything is written.
void requireDistinctFiles(const Suite& suite, const RunOptions& options) {
  const std::vector<std::pair<std::string_view, std::string>> files = {{"--out", options.csv_path},
                                                                       {"--json", options.json_path},
                                                                       {"--benchmark-json", options.benchmark_json_path},
                                                                       {"--suite", suite.path.string()}};
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = i + 1; j < files.size(); ++j)
      if (!files[i].second.empty() && !files[j].second.empty() && sameFile(files[i].second, files[j].second))
        throw Error(fmt::format("{} and {} name the same file, {}", files[i].first, files[j].first, files[i].second));
}

// Checked before the first report is written, which replaces the one before:
// a path that cannot be written must not cost the others (nor a bad option any).
void requireWritableReports(const RunOptions& options) {
  const std::vector<std::pair<std::string_view, std::string>> reports = {
      {"CSV report", options.csv_path},
      {"JSON report", options.json_path},
      {"Google Benchmark JSON report", options.benchmark_json_path}};
  for (const auto& [what, path] : reports) {
    if (path.empty()) continue;
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(path, error);
    if (std::filesystem::is_directory(status)) throw Error(fmt::format("{}: cannot write {}: Is a directory", path, what));
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) continue;  // a FIFO would block
    std::ofstream probe(path, std::ios::app);
    if (!probe) throw Error(fmt::format("{}: cannot write {}: {}", path, what, std::strerror(errno)));
  }
}

// The JSON reports are rewritten whole, atomically, with every row so far.
void writeJsonReports(const RunOptions& options, const RunSummary& summary) {
  if (!options.json_path.empty()) writeJsonFile(options.json_path, summary.metadata, summary.rows);
  if (!options.benchmark_json_path.empty())
    writeGbenchJsonFile(options.benchmark_json_path, summary.metadata, summary.rows);
}

// The backends of one thread count, and where their cases run.
struct ThreadGroup {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<Backend*> pointers;
  CaseSettings settings;
  std::optional<IsolatedCases> isolated;  // made at its first case
  bool placed = false;                    // in process: its OpenMP threads are placed and warmed up
};

std::vector<ResultRow> runInGroup(ThreadGroup& group, const SuiteCase& c, const RunOptions& options,
                                  const StageObserver& observe) {
  if (options.isolate) {
    // The worker places its OpenMP threads and warms its backends up as it starts.
    if (!group.isolated) group.isolated.emplace(group.pointers, group.settings, IsolationSettings{options.case_timeout_s});
    return group.isolated->run(c, observe);
  }
  if (!group.placed) {
    placeOpenMpThreads(coresForThreads(group.settings.threads));
    warmUpBackends(group.pointers);
    group.placed = true;
  }
  return runCase(c, group.pointers, group.settings, observe);
}

bool isFailure(const ResultRow& row) {
  return row.status == VerifyStatus::Failed || row.status == VerifyStatus::Mistrusted ||
         row.status == VerifyStatus::Error;
}

}  // namespace

std::vector<SuiteCase> selectCases(const Suite& suite, const std::string& filter) {
  if (filter.empty()) return suite.cases;
  // libstdc++ compiles a regex by recursion, a frame per atom: 100000 characters
  // overflowed the stack. Case ids are short names.
  constexpr std::size_t kMaxFilterLength = 1000;
  if (filter.size() > kMaxFilterLength)
    throw Error(fmt::format("--filter is {} characters long, above the limit of {}", filter.size(), kMaxFilterLength));
  std::regex pattern;
  try {
    pattern = std::regex(filter, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    throw Error(fmt::format("--filter '{}': not a valid regular expression ({})", filter, error.what()));
  }
  std::vector<SuiteCase> selected;
  for (const SuiteCase& c : suite.cases)
    if (std::regex_search(c.id, pattern)) selected.push_back(c);
  return selected;
}

std::vector<int> threadCountsOf(const SuiteCase& c, const std::vector<int>& requested) {
  if (c.threads > 0) return {c.threads};
  return requested;
}

std::vector<int> threadCountsToRun(const Suite& suite, const std::vector<SuiteCase>& selected,
                                   const std::vector<SuiteCase>& cases, const std::vector<int>& requested) {
  const std::vector<int>& cores = usableCores();
  for (const SuiteCase& c : selected) {
    if (c.threads <= 0 || std::size_t(c.threads) <= cores.size()) continue;
    throw Error(fmt::format("{}:{}: case '{}' asks for threads: {}, and this process may use {} core{}",
                            suite.path.string(), c.line, c.id, c.threads, cores.size(), cores.size() == 1 ? "" : "s"));
  }
  std::vector<int> thread_counts;
  for (const SuiteCase& c : cases)
    for (int threads : threadCountsOf(c, requested))
      if (std::find(thread_counts.begin(), thread_counts.end(), threads) == thread_counts.end())
        thread_counts.push_back(threads);
  if (thread_counts.empty()) thread_counts = requested;  // a shard without cases
  std::sort(thread_counts.begin(), thread_counts.end());
  for (int threads : thread_counts) coresForThreads(threads);
  return thread_counts;
}

RunSummary runSuite(const Suite& suite, const RunOptions& options) {
  requireDistinctBackends(options.backends);
  requireDistinctFiles(suite, options);
  const CpuFeatures features = detectCpuFeatures();
  std::string isa_error;
  const std::optional<Isa> isa = resolveIsa(options.isa, features, &isa_error);
  if (!isa) throw Error(isa_error);
  const std::vector<SuiteCase> selected = selectCases(suite, options.filter);
  if (selected.empty())
    throw Error(fmt::format("--filter '{}' matches no case of suite '{}'", options.filter, suite.name));
  const std::vector<SuiteCase> cases = options.shard ? casesOfShard(selected, *options.shard) : selected;

  // Refused before anything runs if the cores are too few (before the pinning below narrows the affinity).
  const std::vector<int> thread_counts = threadCountsToRun(suite, selected, cases, options.threads);

  BackendConfig config;
  config.isa = *isa;
  config.host = features;
  config.mlir_schedule = options.mlir_schedule;
  config.kernel_cache_dir = options.kernel_cache_dir;
  const TuningSelection tuning = selectTuning(options.tuning, *isa, thisTuningHost(features, hostCacheSizes()));
  if (!tuning.warning.empty()) std::cerr << tuning.warning << "\n";
  config.mlir_tuning_file = tuning.file;
  config.mlir_tuned_schedules = tuning.by_class;

  // Pinned: one thread on one core, or one per core (omp_threads.h).
  std::string pin_error;
  if (!pinCurrentThreadToCpu(usableCores().front(), &pin_error) && options.progress)
    std::cerr << "warning: cannot pin to one core: " << pin_error << "\n";
  const bool any_bf16 = std::any_of(cases.begin(), cases.end(),
                                    [](const SuiteCase& c) { return c.problem.dtype == DType::BF16; });
  // The peaks that choose the bf16 route are the run's own, measured once, per core.
  const Bf16RoutePeaks route_peaks = measureBf16RoutePeaks(*isa, any_bf16);
  config.fp32_fma_peak_gflops = route_peaks.fp32_fma_gflops;
  config.bf16_dot_peak_gflops = route_peaks.bf16_dot_gflops;

  RunSummary summary;
  summary.metadata = collectRunMetadata(features);
  summary.metadata.suite = suite.name;
  for (const SuiteCase& c : selected) summary.metadata.selected_cases.push_back(c.id);
  if (options.shard) summary.metadata.shard = toString(*options.shard);
  summary.cases = cases.size();
  summary.metadata.isa = std::string(toString(*isa));
  summary.metadata.threads = thread_counts.back();
  summary.metadata.thread_counts = thread_counts;
  summary.metadata.requested_threads = options.threads;
  for (const SuiteCase& c : selected)
    if (c.threads > 0) summary.metadata.case_threads[c.id] = c.threads;
  summary.metadata.cores = coresForThreads(thread_counts.back());
  summary.metadata.fill = std::string(toString(options.fill));
  summary.metadata.tuning = tuning.file.empty() ? "none" : tuning.file;
  summary.metadata.command_line = options.command_line;
  summary.metadata.measured_clock_ghz = measureCoreClockGhz();
  // From avx512 up the fp32 peak is that of ZMM FMAs, as the route's.
  summary.metadata.peak_gflops =
      route_peaks.fp32_fma_gflops > 0 ? route_peaks.fp32_fma_gflops : measureFp32PeakGflops(*isa);
  const Bf16Peak bf16_peak = bf16PeakFor(*isa, any_bf16);
  switch (bf16_peak) {
    case Bf16Peak::Tiles:
      summary.metadata.bf16_peak_gflops = measureAmxBf16PeakGflops();
      summary.metadata.bf16_peak_instruction = "tdpbf16ps";
      break;
    case Bf16Peak::DotProduct:
      summary.metadata.bf16_peak_gflops =
          route_peaks.bf16_dot_gflops > 0 ? route_peaks.bf16_dot_gflops : measureBf16DotPeakGflops();
      summary.metadata.bf16_peak_instruction = "vdpbf16ps";
      break;
    case Bf16Peak::None:
      break;
  }
  // Each thread count's own peaks: its cores measured at once (peak.h).
  for (int threads : thread_counts) {
    if (threads == 1) continue;
    const std::vector<int> used = coresForThreads(threads);
    ThreadPeaks& peaks = summary.metadata.peaks_by_threads[threads];
    peaks.fp32_gflops = measureFp32PeakGflops(route_peaks.fp32_fma_gflops > 0 ? Isa::Avx512 : *isa, used);
    if (bf16_peak == Bf16Peak::Tiles) peaks.bf16_gflops = measureAmxBf16PeakGflops(used);
    if (bf16_peak == Bf16Peak::DotProduct) peaks.bf16_gflops = measureBf16DotPeakGflops(used);
  }

  // Cold cache: each call's operands were last touched 2x the last-level cache ago.
  const std::int64_t last_level_bytes = hostCacheSizes().last_level_bytes;
  const std::int64_t cold_rotation_bytes =
      options.cold_rotation_bytes > 0 ? options.cold_rotation_bytes : 2 * last_level_bytes;
  if (options.cache == CacheMode::Cold && cold_rotation_bytes < last_level_bytes)
    std::cerr << fmt::format("warning: --cold-mib {:g} spans less than the last-level cache ({:g} MiB): calls may find "
                             "their operands still in it\n",
                             double(cold_rotation_bytes) / (1 << 20), double(last_level_bytes) / (1 << 20));
  summary.metadata.cache = std::string(toString(options.cache));
  summary.metadata.schedule_option = options.mlir_schedule.empty() ? "none" : options.mlir_schedule;
  summary.metadata.repetitions = options.timing.repetitions;
  summary.metadata.min_time_s = options.timing.min_time_s;
  summary.metadata.noisy_iqr = options.noisy_iqr_fraction;
  if (options.cache == CacheMode::Cold) summary.metadata.cold_mib = double(cold_rotation_bytes) / (1 << 20);

  // Said once here, before the workers are forked, and only where an mlir backend would use it.
  if (std::any_of(options.backends.begin(), options.backends.end(),
                  [](const std::string& name) { return name.rfind("mlir", 0) == 0; }))
    mlir_backend::warnIfKernelCacheUnwritable(options.kernel_cache_dir);
  // One set of backends per thread count, each with its own worker.
  std::map<int, ThreadGroup> groups;
  for (int threads : thread_counts) {
    ThreadGroup& group = groups[threads];
    BackendConfig group_config = config;
    group_config.threads = threads;
    group.backends = createBackends(options.backends, group_config);
    for (const auto& backend : group.backends) group.pointers.push_back(backend.get());
    group.settings.suite = suite.name;
    group.settings.isa = *isa;
    group.settings.threads = threads;
    group.settings.options = &options;
    const auto peaks = summary.metadata.peaks_by_threads.find(threads);
    group.settings.fp32_peak_gflops =
        peaks == summary.metadata.peaks_by_threads.end() ? summary.metadata.peak_gflops : peaks->second.fp32_gflops;
    group.settings.bf16_peak_gflops =
        peaks == summary.metadata.peaks_by_threads.end() ? summary.metadata.bf16_peak_gflops : peaks->second.bf16_gflops;
    group.settings.cold_rotation_bytes = cold_rotation_bytes;
  }
  for (const auto& backend : groups.begin()->second.backends)
    summary.metadata.library_versions[backend->name()] = backend->version();
  requireWritableReports(options);
  writeJsonReports(options, summary);
  std::optional<CsvWriter> csv;
  if (!options.csv_path.empty()) csv.emplace(options.csv_path);

  std::size_t rows_to_run = 0;
  for (const SuiteCase& c : cases) rows_to_run += threadCountsOf(c, options.threads).size();
  ProgressBar progress(rows_to_run, options.progress);
  const InterruptScope interrupts;
  for (std::size_t ci = 0; ci < cases.size() && !interruptRequested(); ++ci) {
    const SuiteCase& c = cases[ci];
    for (int threads : threadCountsOf(c, options.threads)) {
      if (interruptRequested()) break;
      ThreadGroup& group = groups.at(threads);
      const StageObserver show_progress = [&](std::size_t b, CaseStage stage, const ResultRow&) {
        const std::string on = threads > 1 ? fmt::format(" ({} threads)", threads) : "";
        progress.show(b == kNoBackend
                          ? fmt::format("{}{}: {}", c.id, on, toString(stage))
                          : fmt::format("{}{} {}: {}", c.id, on, group.pointers[b]->name(), toString(stage)));
      };
      std::vector<ResultRow> case_rows = runInGroup(group, c, options, show_progress);
      // The JSON first: a CSV that cannot be written (a full disk) ends the
      // run with its error, and the JSON still holds this case's rows.
      const std::size_t first_new = summary.rows.size();
      for (ResultRow& row : case_rows) {
        if (isFailure(row)) ++summary.failures;
        summary.rows.push_back(std::move(row));
      }
      writeJsonReports(options, summary);
      if (csv)
        for (std::size_t r = first_new; r < summary.rows.size(); ++r) csv->write(summary.rows[r]);
      progress.caseDone();
    }
  }
  summary.interrupted = interruptRequested();
  return summary;
}

}  // namespace nkbench
