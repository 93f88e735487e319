#include "harness/run/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <regex>

#include "harness/core/error.h"
#include "harness/host/cache_info.h"
#include "harness/host/clock.h"
#include "harness/host/peak.h"
#include "harness/host/pinning.h"
#include "harness/report/csv_writer.h"
#include "harness/report/gbench_json_writer.h"
#include "harness/report/json_writer.h"
#include "harness/run/operand_sets.h"
#include "harness/run/progress.h"
#include "harness/run/run_metadata.h"
#include "kernels/registry.h"
#include "reference/bf16.h"
#include "reference/c_operand.h"
#include "reference/compare.h"
#include "reference/reference_gemm.h"

namespace nkbench {
namespace {

using Clock = std::chrono::steady_clock;

double elapsedMs(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::vector<std::unique_ptr<Backend>> createBackends(const std::vector<std::string>& names,
                                                    const BackendConfig& config) {
  std::vector<std::unique_ptr<Backend>> backends;
  for (const std::string& name : names) backends.push_back(createBackend(name, config));
  return backends;
}

ResultRow blankRow(const Suite& suite, const SuiteCase& c, const std::string& backend, Isa isa, int threads) {
  ResultRow row;
  row.suite = suite.name;
  row.case_id = c.id;
  row.problem = c.problem;
  row.isa = std::string(toString(isa));
  row.backend = backend;
  row.threads = threads;
  return row;
}

// Pack + unpack cost per call: median of a few calls (they are far slower than compute).
double measurePackMs(Kernel& kernel) {
  std::vector<double> ms;
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    kernel.pack();
    kernel.unpack();
    ms.push_back(elapsedMs(start));
  }
  std::sort(ms.begin(), ms.end());
  return ms[1];
}

// One kernel bound to one operand set and its own C.
struct BoundKernel {
  std::unique_ptr<COperand> c;  // stable address: the kernel holds a pointer to it
  std::unique_ptr<Kernel> kernel;
};

// A backend's kernels that passed verification, waiting for their turn to be
// timed: one per operand set, called in turn (cold cache) or just one (hot).
struct VerifiedKernel {
  std::size_t row = 0;  // its row among the case's rows
  std::vector<BoundKernel> sets;
  std::size_t next = 0;
  void computeNext() {
    sets[next].kernel->compute();
    next = next + 1 == sets.size() ? 0 : next + 1;
  }
  void finishCalls() {
    for (BoundKernel& set : sets) set.kernel->finishCalls();
  }
};

// Ends a run of calls of a kernel however the run ends, so that what the calls
// shared on this thread (AMX tiles) never outlives it.
template <class Calls>
class RunOfCalls {
 public:
  explicit RunOfCalls(Calls& calls) : calls_(calls) {}
  ~RunOfCalls() { calls_.finishCalls(); }
  RunOfCalls(const RunOfCalls&) = delete;
  RunOfCalls& operator=(const RunOfCalls&) = delete;

 private:
  Calls& calls_;
};

BoundKernel prepareBound(Backend& backend, const Problem& problem, const ProblemData& data, const OperandSet& inputs) {
  BoundKernel bound;
  bound.c = std::make_unique<COperand>(problem, data);
  bound.kernel = backend.prepare(problem, {inputs.a(), inputs.b(), bound.c->data()});
  return bound;
}

// Prepares and verifies one backend on the case, filling what is known of its row.
// Returns the kernels only when every one passed: an unverified kernel never
// reports a speed.
std::optional<VerifiedKernel> prepareAndVerify(Backend& backend, const SuiteCase& c, const ProblemData& data,
                                               const std::vector<OperandSet>& inputs,
                                               const ReferenceResult& reference, FillMode fill, ResultRow& row) {
  if (auto reason = backend.unsupportedReason(c.problem)) {
    row.status = VerifyStatus::Skipped;
    row.note = *reason;
    return std::nullopt;
  }
  VerifiedKernel verified;
  for (std::size_t set = 0; set < inputs.size(); ++set) {
    const auto compile_start = Clock::now();
    BoundKernel& bound = verified.sets.emplace_back(prepareBound(backend, c.problem, data, inputs[set]));
    Kernel& kernel = *bound.kernel;
    if (set == 0) {  // later sets reuse what the first compiled; a failing row still says what ran
      row.compile_ms = elapsedMs(compile_start);
      row.implementation = kernel.info().implementation;
      row.isa_used = kernel.info().isa_used;
      row.register_block = kernel.info().register_block;
      row.nanokernel = kernel.info().nanokernel;
    }
    kernel.pack();
    {
      const RunOfCalls<Kernel> run(kernel);
      kernel.compute();
    }
    kernel.unpack();
    const Verification verification = verifyResult(c.problem, fill, bound.c->asFloat().data(), reference);
    row.status = verification.status;
    row.max_error = std::max(row.max_error, verification.max_error);
    if (verification.status != VerifyStatus::Passed) {
      row.note = inputs.size() > 1 ? fmt::format("operand set {}: {}", set, verification.detail) : verification.detail;
      return std::nullopt;
    }
  }
  const KernelInfo& info = verified.sets.front().kernel->info();
  row.pack_ms = info.packing.empty() ? 0.0 : measurePackMs(*verified.sets.front().kernel);
  row.note = info.caveat.empty() || info.packing.empty() ? info.caveat + info.packing
                                                         : info.caveat + "; " + info.packing;
  if (inputs.size() > 1) {
    const double mib = double(operandBytes(c.problem)) * double(inputs.size()) / (1024.0 * 1024.0);
    row.note += fmt::format("{}cold cache: {} operand sets ({:.0f} MiB) in turn", row.note.empty() ? "" : "; ",
                            inputs.size(), mib);
  }
  return verified;
}

// Repetitions are interleaved across backends, one of each in turn, so that a slow
// spell of a shared machine hits every backend alike and the ratios stay fair.
void timeInterleaved(std::vector<VerifiedKernel>& kernels, const SuiteCase& c, const RunOptions& options,
                     double peak_gflops, std::vector<ResultRow>& rows) {
  const TimingOptions& timing = options.timing;
  TimingOptions one_repetition = timing;
  one_repetition.repetitions = 1;
  std::vector<std::vector<double>> seconds(kernels.size());
  for (int repetition = 0; repetition < timing.repetitions; ++repetition)
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      ResultRow& row = rows[kernels[i].row];
      if (row.status != VerifyStatus::Passed) continue;
      try {
        VerifiedKernel& kernel = kernels[i];
        const RunOfCalls<VerifiedKernel> run(kernel);
        const TimingResult once =
            timeKernel(c.id + "/" + row.backend, [&kernel] { kernel.computeNext(); }, one_repetition);
        seconds[i].push_back(once.seconds.front());
        row.samples_iterations.push_back(once.iterations.front());
      } catch (const std::exception& error) {
        row.status = VerifyStatus::Error;
        row.note = error.what();
      }
    }
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    ResultRow& row = rows[kernels[i].row];
    if (row.status != VerifyStatus::Passed) continue;
    const TimingResult timing_result = summarizeTimes(std::move(seconds[i]));
    const double flops = c.problem.flops();
    row.repetitions = int(timing_result.seconds.size());
    row.median_ms = timing_result.median_s * 1e3;
    row.best_ms = timing_result.best_s * 1e3;
    row.stddev_ms = timing_result.stddev_s * 1e3;
    row.iqr_ms = timing_result.iqr_s * 1e3;
    row.noisy = timing_result.iqr_s > options.noisy_iqr_fraction * timing_result.median_s;
    for (double s : timing_result.seconds) row.samples_ms.push_back(s * 1e3);
    row.median_gflops = flops / timing_result.median_s * 1e-9;
    row.best_gflops = flops / timing_result.best_s * 1e-9;
    row.peak_fraction = peak_gflops > 0 ? row.median_gflops / peak_gflops : 0.0;
  }
}

void fillRatiosToLibxsmm(std::vector<ResultRow>& case_rows) {
  auto libxsmm = std::find_if(case_rows.begin(), case_rows.end(),
                              [](const ResultRow& r) { return r.backend == "libxsmm" && r.timed(); });
  if (libxsmm == case_rows.end() || libxsmm->median_gflops <= 0) return;
  for (ResultRow& row : case_rows)
    if (row.timed()) row.ratio_to_libxsmm = row.median_gflops / libxsmm->median_gflops;
}

struct CheckableData {
  ProblemData data;
  ReferenceResult reference;
};

// Data and its reference. On tiny outputs the exact fill can cancel to a mostly
// zero reference, which cannot tell a kernel that wrote zeros from a correct one:
// the next fixed seeds are tried first, so such cases verify instead of being mistrusted.
CheckableData makeCheckableData(const Problem& problem, FillMode fill) {
  constexpr std::uint64_t kSeeds = 8;
  CheckableData best;
  std::size_t best_zeros = std::numeric_limits<std::size_t>::max();
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    ProblemData data = makeProblemData(problem, fill, seed);
    ReferenceResult reference = referenceGemm(problem, data.a.data(), data.b.data(), data.c_init.data());
    const auto zeros = std::size_t(std::count(reference.value.begin(), reference.value.end(), 0.0));
    if (zeros < best_zeros) {
      best_zeros = zeros;
      best = {std::move(data), std::move(reference)};
    }
    if (2 * best_zeros <= best.reference.value.size()) break;
  }
  return best;
}

// The JSON reports are rewritten whole, atomically, with every row so far.
void writeJsonReports(const RunOptions& options, const RunSummary& summary) {
  if (!options.json_path.empty()) writeJsonFile(options.json_path, summary.metadata, summary.rows);
  if (!options.benchmark_json_path.empty())
    writeGbenchJsonFile(options.benchmark_json_path, summary.metadata, summary.rows);
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

RunSummary runSuite(const Suite& suite, const RunOptions& options) {
  const CpuFeatures features = detectCpuFeatures();
  std::string isa_error;
  const std::optional<Isa> isa = resolveIsa(options.isa, features, &isa_error);
  if (!isa) throw Error(isa_error);
  const std::vector<SuiteCase> selected = selectCases(suite, options.filter);
  if (selected.empty())
    throw Error(fmt::format("--filter '{}' matches no case of suite '{}'", options.filter, suite.name));
  const std::vector<SuiteCase> cases = options.shard ? casesOfShard(selected, *options.shard) : selected;

  BackendConfig config;
  config.isa = *isa;
  config.host = features;
  config.threads = 1;
  config.mlir_schedule = options.mlir_schedule;
  std::vector<std::unique_ptr<Backend>> backends = createBackends(options.backends, config);

  // One core, pinned: the timings are single-core figures.
  std::string pin_error;
  if (!pinCurrentThreadToCpu(currentCpu(), &pin_error) && options.progress)
    std::cerr << "warning: cannot pin to one core: " << pin_error << "\n";

  RunSummary summary;
  summary.metadata = collectRunMetadata(features);
  summary.metadata.suite = suite.name;
  for (const SuiteCase& c : selected) summary.metadata.selected_cases.push_back(c.id);
  if (options.shard) summary.metadata.shard = toString(*options.shard);
  summary.cases = cases.size();
  summary.metadata.isa = std::string(toString(*isa));
  summary.metadata.threads = config.threads;
  summary.metadata.fill = std::string(toString(options.fill));
  summary.metadata.command_line = options.command_line;
  summary.metadata.measured_clock_ghz = measureCoreClockGhz();
  summary.metadata.peak_gflops = measureFp32PeakGflops(*isa);
  const bool any_bf16 = std::any_of(cases.begin(), cases.end(),
                                    [](const SuiteCase& c) { return c.problem.dtype == DType::BF16; });
  switch (bf16PeakFor(*isa, any_bf16)) {
    case Bf16Peak::Tiles:
      summary.metadata.bf16_peak_gflops = measureAmxBf16PeakGflops();
      summary.metadata.bf16_peak_instruction = "tdpbf16ps";
      break;
    case Bf16Peak::DotProduct:
      summary.metadata.bf16_peak_gflops = measureBf16DotPeakGflops();
      summary.metadata.bf16_peak_instruction = "vdpbf16ps";
      break;
    case Bf16Peak::None:
      break;
  }
  for (const auto& backend : backends) summary.metadata.library_versions[backend->name()] = backend->version();

  std::optional<CsvWriter> csv;
  if (!options.csv_path.empty()) csv.emplace(options.csv_path);
  // Cold cache: each call's operands were last touched 2x the last-level cache ago.
  const std::int64_t cold_rotation_bytes =
      options.cold_rotation_bytes > 0 ? options.cold_rotation_bytes : 2 * hostCacheSizes().last_level_bytes;
  summary.metadata.cache = std::string(toString(options.cache));
  writeJsonReports(options, summary);
  ProgressBar progress(cases.size(), options.progress);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const SuiteCase& c = cases[ci];
    const auto [data, reference] = makeCheckableData(c.problem, options.fill);
    std::vector<OperandSet> inputs;
    const std::int64_t sets = operandSetCount(c.problem, options.cache, cold_rotation_bytes);
    for (std::int64_t set = 0; set < sets; ++set) inputs.push_back(makeOperandSet(c.problem, data));
    std::vector<ResultRow> case_rows;
    std::vector<VerifiedKernel> verified;
    for (const auto& backend : backends) {
      progress.show(fmt::format("{} {}: compile and verify", c.id, backend->name()));
      ResultRow& row = case_rows.emplace_back(blankRow(suite, c, backend->name(), *isa, config.threads));
      try {
        if (auto kernel = prepareAndVerify(*backend, c, data, inputs, reference, options.fill, row)) {
          kernel->row = case_rows.size() - 1;
          verified.push_back(std::move(*kernel));
        }
      } catch (const std::exception& error) {
        row.status = VerifyStatus::Error;
        row.note = error.what();
      }
    }
    progress.show(fmt::format("{}: timing {} kernels x {} repetitions", c.id, verified.size(),
                              options.timing.repetitions));
    // bf16 rows are judged against the dot-product peak where the ISA has one.
    const double peak = c.problem.dtype == DType::BF16 && summary.metadata.bf16_peak_gflops > 0
                            ? summary.metadata.bf16_peak_gflops
                            : summary.metadata.peak_gflops;
    timeInterleaved(verified, c, options, peak, case_rows);
    fillRatiosToLibxsmm(case_rows);
    for (ResultRow& row : case_rows) {
      if (isFailure(row)) ++summary.failures;
      if (csv) csv->write(row);
      summary.rows.push_back(std::move(row));
    }
    writeJsonReports(options, summary);
    progress.caseDone();
  }
  return summary;
}

}  // namespace nkbench
