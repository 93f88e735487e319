#include "harness/core/error.h"
#include "harness/run/case_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>

#include "harness/run/operand_sets.h"
#include "harness/run/timing.h"
#include "operands/c_operand.h"
#include "reference/compare.h"
#include "reference/reference_gemm.h"
#include "reference/reference_mlp.h"

namespace nkbench {
namespace {

using Clock = std::chrono::steady_clock;

double elapsedMs(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
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

// The kernel bound to `inputs` and a C of its own; `compile_ms`: the time prepare() took.
BoundKernel prepareBound(Backend& backend, const Problem& problem, const ProblemData& data, const OperandSet& inputs,
                         double& compile_ms) {
  BoundKernel bound;
  bound.c = std::make_unique<COperand>(problem, data, inputs.index);
  const auto start = Clock::now();
  bound.kernel = backend.prepare(problem, {inputs.a(), inputs.b(), bound.c->data(), inputs.biasOrNull()});
  compile_ms = elapsedMs(start);
  return bound;
}

// Prepares and verifies one backend on the case, filling what is known of its row.
// Returns the kernels only when every one passed: an unverified kernel never
// reports a speed.
std::optional<VerifiedKernel> prepareAndVerify(Backend& backend, const SuiteCase& c, const ProblemData& data,
                                               const std::vector<OperandSet>& inputs,
                                               const ReferenceResult& reference, FillMode fill, ResultRow& row,
                                               const std::function<void(CaseStage)>& announce) {
  if (auto reason = backend.unsupportedReason(c.problem)) {
    row.status = VerifyStatus::Skipped;
    row.note = *reason;
    return std::nullopt;
  }
  VerifiedKernel verified;
  for (std::size_t set = 0; set < inputs.size(); ++set) {
    announce(CaseStage::Compiling);
    double compile_ms = 0;
    BoundKernel& bound = verified.sets.emplace_back(prepareBound(backend, c.problem, data, inputs[set], compile_ms));
    Kernel& kernel = *bound.kernel;
    if (set == 0) {  // later sets reuse what the first compiled; a failing row still says what ran
      row.compile_ms = compile_ms;
      row.implementation = kernel.info().implementation;
      row.isa_used = kernel.info().isa_used;
      row.register_block = kernel.info().register_block;
      row.schedule = kernel.info().schedule;
      row.schedule_source = kernel.info().schedule_source;
      row.kernel_cache = kernel.info().kernel_cache;
      row.nanokernel = kernel.info().nanokernel;
    }
    announce(CaseStage::Verifying);
    kernel.pack();
    {
      const RunOfCalls<Kernel> run(kernel);
      kernel.compute();
    }
    kernel.unpack();
    const Verification verification = verifyResult(c.problem, fill, bound.c->asFloat().data(), reference);
    // A write outside the operands is an error whatever C holds.
    if (auto damage = outOfBoundsWrite(inputs[set], *bound.c)) {
      row.status = VerifyStatus::Error;
      row.note = *damage;
      return std::nullopt;
    }
    row.status = verification.status;
    row.max_error = std::max(row.max_error, verification.max_error);
    if (verification.status != VerifyStatus::Passed) {
      row.note = inputs.size() > 1 ? fmt::format("operand set {}: {}", set, verification.detail) : verification.detail;
      return std::nullopt;
    }
  }
  const KernelInfo& info = verified.sets.front().kernel->info();
  announce(CaseStage::Timing);
  row.pack_ms = info.packing.empty() ? 0.0 : measurePackMs(*verified.sets.front().kernel);
  row.note = info.caveat.empty() || info.packing.empty() ? info.caveat + info.packing
                                                         : info.caveat + "; " + info.packing;
  return verified;
}

// What a cold-cache row's operands spanned, and where the cap on sets left
// them short of the span asked for (a tiny case's sets may then stay in the
// last-level cache).
std::string coldCacheNote(const Problem& problem, std::size_t sets, std::int64_t rotation_bytes) {
  const double bytes = double(operandBytes(problem)) * double(sets);
  constexpr double kMiB = 1024.0 * 1024.0;
  const std::string shortfall =
      bytes < double(rotation_bytes)
          ? fmt::format(", the most sets, short of the {:.0f} MiB asked: they may stay in the last-level cache",
                        double(rotation_bytes) / kMiB)
          : "";
  return fmt::format("cold cache: {} operand sets ({:.0f} MiB{}) in turn", sets, bytes / kMiB, shortfall);
}

// Repetitions are interleaved across backends, one of each in turn, so that a slow
// spell of a shared machine hits every backend alike and the ratios stay fair.
void timeInterleaved(std::vector<VerifiedKernel>& kernels, const SuiteCase& c, const RunOptions& options,
                     double peak_gflops, std::vector<ResultRow>& rows,
                     const std::function<void(std::size_t row)>& announce) {
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
        announce(kernel.row);
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
    // Past the peak: the peak was measured while the machine was slower (busy,
    // or clocked down), so this row's fraction, and its neighbours', mislead.
    if (row.peak_fraction > 1.0) {
      row.noisy = true;
      if (!row.note.empty()) row.note += "; ";
      row.note += fmt::format("faster than the measured peak of {:.1f} GFLOPS, which the machine's load or clock "
                              "held down when it was measured: rerun on a quiet machine",
                              peak_gflops);
    }
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
// zero reference, which cannot tell a kernel that wrote zeros from a correct one
// (after ReLU, most of an mlp layer's outputs may be zero): the next fixed seeds
// are tried first, so such cases verify instead of being mistrusted.
CheckableData makeCheckableData(const Problem& problem, FillMode fill) {
  constexpr std::uint64_t kSeeds = 8;
  CheckableData best;
  std::size_t best_zeros = std::numeric_limits<std::size_t>::max();
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    ProblemData data = makeProblemData(problem, fill, seed);
    ReferenceResult reference = problem.kind == OpKind::Mlp
                                    ? referenceMlp(problem, data)
                                    : referenceGemm(problem, data.a.data(), data.b.data(), data.c_init.data());
    const auto zeros = std::size_t(std::count(reference.value.begin(), reference.value.end(), 0.0));
    const bool trusted = !tooManyReferenceZeros(problem, reference);
    if (zeros < best_zeros || trusted) {
      best_zeros = zeros;
      best = {std::move(data), std::move(reference)};
    }
    if (trusted) break;
  }
  return best;
}

}  // namespace

std::string_view toString(CaseStage stage) {
  switch (stage) {
    case CaseStage::PreparingData: return "preparing the data";
    case CaseStage::Compiling: return "compiling";
    case CaseStage::Verifying: return "verifying";
    case CaseStage::Timing: return "timing";
  }
  return "?";
}

void warmUpBackends(const std::vector<Backend*>& backends) {
  for (Backend* backend : backends) {
    try {
      backend->warmUp();
    } catch (const Error&) {
      // Only a head start: the cases report whatever made it fail.
    }
  }
}

ResultRow blankRow(const CaseSettings& settings, const SuiteCase& c, const std::string& backend) {
  ResultRow row;
  row.suite = settings.suite;
  row.case_id = c.id;
  row.problem = c.problem;
  row.isa = std::string(toString(settings.isa));
  row.backend = backend;
  row.threads = settings.threads;
  return row;
}

std::vector<ResultRow> runCase(const SuiteCase& c, const std::vector<Backend*>& backends, const CaseSettings& settings,
                               const StageObserver& observe) {
  const RunOptions& options = *settings.options;
  std::vector<ResultRow> rows;
  for (const Backend* backend : backends) rows.push_back(blankRow(settings, c, backend->name()));
  observe(kNoBackend, CaseStage::PreparingData, ResultRow{});
  const auto [data, reference] = makeCheckableData(c.problem, options.fill);
  const std::vector<OperandSet> inputs =
      makeOperandSets(c.problem, data, operandSetCount(c.problem, options.cache, settings.cold_rotation_bytes));
  std::vector<VerifiedKernel> verified;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    ResultRow& row = rows[b];
    try {
      const auto announce = [&](CaseStage stage) { observe(b, stage, row); };
      if (auto kernel = prepareAndVerify(*backends[b], c, data, inputs, reference, options.fill, row, announce)) {
        if (inputs.size() > 1)
          row.note += (row.note.empty() ? "" : "; ") +
                      coldCacheNote(c.problem, inputs.size(), settings.cold_rotation_bytes);
        kernel->row = b;
        verified.push_back(std::move(*kernel));
      }
    } catch (const std::exception& error) {
      row.status = VerifyStatus::Error;
      row.note = error.what();
    }
  }
  // bf16 rows are judged against the bf16 peak where the ISA has one.
  const double peak = c.problem.dtype == DType::BF16 && settings.bf16_peak_gflops > 0 ? settings.bf16_peak_gflops
                                                                                        : settings.fp32_peak_gflops;
  timeInterleaved(verified, c, options, peak, rows,
                  [&](std::size_t row) { observe(row, CaseStage::Timing, rows[row]); });
  fillRatiosToLibxsmm(rows);
  return rows;
}

}  // namespace nkbench
