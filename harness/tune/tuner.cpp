#include "harness/tune/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "harness/core/error.h"
#include "harness/host/cache_info.h"
#include "harness/host/peak.h"
#include "harness/host/pinning.h"
#include "harness/run/case_runner.h"
#include "harness/run/interrupt.h"
#include "harness/run/isolation/isolated_case.h"
#include "harness/run/progress.h"
#include "harness/run/run_metadata.h"
#include "harness/run/runner.h"
#include "harness/tune/tuning_fit.h"
#include "harness/tune/tuning_update.h"
#include "kernels/mlir/route_choice.h"
#include "kernels/mlir/tuning/shape_class.h"
#include "kernels/mlir/tuning/tuning_candidates.h"
#include "kernels/mlir/jit/kernel_cache.h"
#include "kernels/registry.h"

namespace nkbench {
namespace {

using Clock = std::chrono::steady_clock;

// Short timings to rank candidates; the confirmation of the best against the
// analytic schedule times longer, interleaved, so that drift hits both alike.
constexpr TimingOptions kRankTiming{.repetitions = 3, .min_time_s = 0.02, .warmup_s = 0.005};
constexpr TimingOptions kConfirmTiming{.repetitions = 7, .min_time_s = 0.05, .warmup_s = 0.01};
// A tuned schedule replaces the analytic one only when it wins by more than noise.
constexpr double kMinGain = 1.02;

struct ClassCases {
  std::string shape_class;
  std::vector<SuiteCase> cases;
};

// The largest, the smallest, then those between, by FLOPs: the class's range first.
std::vector<SuiteCase> representatives(std::vector<SuiteCase> cases, std::size_t count) {
  std::stable_sort(cases.begin(), cases.end(),
                   [](const SuiteCase& a, const SuiteCase& b) { return a.problem.flops() > b.problem.flops(); });
  std::vector<SuiteCase> chosen;
  if (cases.empty() || count == 0) return chosen;
  chosen.push_back(cases.front());
  if (cases.size() > 1 && count > 1) chosen.push_back(cases.back());
  for (std::size_t i = 1; i + 1 < cases.size() && chosen.size() < count; ++i) chosen.push_back(cases[i]);
  return chosen;
}

struct Measured {
  std::vector<TuningMeasurement> results;  // one per schedule, in order
};

class Tuner {
 public:
  Tuner(const TuneOptions& options, Isa isa, const CpuFeatures& features, const Bf16RoutePeaks& peaks)
      : options_(options), isa_(isa), features_(features), peaks_(peaks) {
    run_options_.fill = FillMode::ExactInteger;
    run_options_.isolate = options.isolate;
    settings_.suite = "tune";
    settings_.isa = isa;
    settings_.options = &run_options_;
  }

  bool budgetLeft() const { return elapsed() < options_.budget_s; }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  std::size_t measurements() const { return measurements_; }

  // Every schedule on every case, interleaved per case; a schedule whose row on
  // any case did not pass is out, with the first such row's status and note.
  // kAnalyticSchedule runs each case's own analytic route, as `run` without a
  // tuning (the peaks that choose the bf16 route are the tune's).
  Measured measure(const std::vector<SuiteCase>& cases, const std::vector<std::string>& schedules,
                   const TimingOptions& timing, ProgressBar& progress, const std::string& what) {
    run_options_.timing = timing;
    std::vector<std::unique_ptr<Backend>> backends;
    std::vector<Backend*> pointers;
    for (const std::string& schedule : schedules) {
      BackendConfig config;
      config.isa = isa_;
      config.host = features_;
      config.mlir_schedule = schedule == kAnalyticSchedule ? "" : schedule;
      config.fp32_fma_peak_gflops = peaks_.fp32_fma_gflops;
      config.bf16_dot_peak_gflops = peaks_.bf16_dot_gflops;
      config.kernel_cache_dir = options_.kernel_cache_dir;
      backends.push_back(createBackend("mlir", config));
      pointers.push_back(backends.back().get());
    }
    std::optional<IsolatedCases> isolated;
    if (options_.isolate) isolated.emplace(pointers, settings_, IsolationSettings{kCaseTimeoutS});
    Measured measured;
    std::vector<double> log_sums(schedules.size(), 0.0);
    for (const std::string& schedule : schedules) measured.results.push_back({schedule, 0.0, "passed"});
    for (const SuiteCase& c : cases) {
      if (interruptRequested()) break;
      const StageObserver show = [&](std::size_t b, CaseStage stage, const ResultRow&) {
        progress.show(b == kNoBackend ? fmt::format("{}: {} {}", what, c.id, toString(stage))
                                      : fmt::format("{}: {} {}: {}", what, c.id, schedules[b], toString(stage)));
      };
      const std::vector<ResultRow> rows = isolated ? isolated->run(c, show) : runCase(c, pointers, settings_, show);
      for (std::size_t i = 0; i < rows.size() && i < schedules.size(); ++i) {
        TuningMeasurement& result = measured.results[i];
        if (result.status != "passed") continue;
        if (rows[i].status != VerifyStatus::Passed || rows[i].median_gflops <= 0) {
          result.status = fmt::format("{} on {}: {}", toString(rows[i].status), c.id, rows[i].note);
          continue;
        }
        log_sums[i] += std::log(rows[i].median_gflops);
      }
      measurements_ += schedules.size();
      progress.caseDone();
    }
    for (std::size_t i = 0; i < schedules.size(); ++i)
      if (measured.results[i].status == "passed")
        measured.results[i].gflops = std::exp(log_sums[i] / double(std::max<std::size_t>(1, cases.size())));
    return measured;
  }

 private:
  static constexpr double kCaseTimeoutS = 120.0;
  const TuneOptions& options_;
  Isa isa_;
  CpuFeatures features_;
  Bf16RoutePeaks peaks_;
  RunOptions run_options_;
  CaseSettings settings_;
  Clock::time_point start_ = Clock::now();
  std::size_t measurements_ = 0;
};

// The schedule all of `names` are, or nullopt where they differ.
std::optional<std::string> commonSchedule(const std::vector<std::string>& names) {
  if (names.empty() || std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n != names[0]; }))
    return std::nullopt;
  return names.front();
}

const TuningMeasurement* best(const std::vector<TuningMeasurement>& results) {
  const TuningMeasurement* winner = nullptr;
  for (const TuningMeasurement& m : results)
    if (m.status == "passed" && (!winner || m.gflops > winner->gflops)) winner = &m;
  return winner;
}

// Candidates as an mlp runs them (scheduleAnMlpRuns), each once: the f32-A
// and widening routes of one block are one mlp kernel, which would otherwise be
// timed twice under two names and written under either.
std::vector<std::string> asAnMlpRunsThem(const std::vector<std::string>& names) {
  std::vector<std::string> runs;
  for (const std::string& name : names) {
    std::string run = mlir_backend::scheduleAnMlpRuns(name);
    if (std::find(runs.begin(), runs.end(), run) == runs.end()) runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace

TuneSummary tuneSuite(const Suite& suite, const TuneOptions& options) {
  const CpuFeatures features = detectCpuFeatures();
  std::string isa_error;
  const std::optional<Isa> isa = resolveIsa(options.isa, features, &isa_error);
  if (!isa) throw Error(isa_error);
  const std::vector<SuiteCase> selected = selectCases(suite, options.filter);
  if (selected.empty()) throw Error(fmt::format("--filter '{}' matches no case of suite '{}'", options.filter, suite.name));
  const CacheSizes caches = hostCacheSizes();
  const TuningHost here = thisTuningHost(features, caches);

  // A file that cannot be written or updated is refused before anything is measured (at the default path, one
  // that does not hold here is replaced instead, said when the first class is written).
  const TuningTarget target{options.out, options.out_is_default, options.out_from_environment};
  const TuningBuild build = thisTuningBuild();
  TuneSummary summary;
  std::string replaced;
  std::string warned;  // the file is replaced at the first class written: one warning for both
  const auto warnOnce = [&] {
    if (!replaced.empty() && replaced != warned) std::cerr << "warning: " << replaced << "\n";
    warned = replaced;
  };
  prepareTuningTarget(target);
  summary.tuning = tuningToUpdate(target, here, build, replaced);  // warned of when the first class replaces it
  summary.tuning.host = here;

  // Classes in the order their first case comes in the suite.
  std::vector<ClassCases> classes;
  BackendConfig analytic_config;
  analytic_config.isa = *isa;
  analytic_config.host = features;
  const std::unique_ptr<Backend> analytic = createBackend("mlir", analytic_config);
  for (const SuiteCase& c : selected) {
    if (auto reason = analytic->unsupportedReason(c.problem)) {
      summary.skipped.push_back(fmt::format("{}: {}", c.id, *reason));
      continue;
    }
    const std::string shape_class = mlir_backend::shapeClassOf(c.problem, caches);
    auto it = std::find_if(classes.begin(), classes.end(),
                           [&](const ClassCases& known) { return known.shape_class == shape_class; });
    if (it == classes.end()) it = classes.insert(classes.end(), {shape_class, {}});
    it->cases.push_back(c);
  }
  if (classes.empty()) throw Error(fmt::format("mlir runs no case of suite '{}' under --isa {}", suite.name, toString(*isa)));

  std::string pin_error;
  pinCurrentThreadToCpu(currentCpu(), &pin_error);
  const bool any_bf16 = std::any_of(selected.begin(), selected.end(),
                                    [](const SuiteCase& c) { return c.problem.dtype == DType::BF16; });
  const Bf16RoutePeaks peaks = measureBf16RoutePeaks(*isa, any_bf16);
  mlir_backend::RouteRequest analytic_request;
  analytic_request.caches = caches;
  analytic_request.peaks = {peaks.fp32_fma_gflops, peaks.bf16_dot_gflops};
  mlir_backend::warnIfKernelCacheUnwritable(options.kernel_cache_dir);  // once, before the workers are forked
  Tuner tuner(options, *isa, features, peaks);
  // Steps of the bar: per case measured, rank register blocks, (GEMM blocks,) settings, confirm.
  const auto casesOf = [&](const ClassCases& k) { return std::min(options.cases_per_class, k.cases.size()); };
  const auto stepsOf = [&](const ClassCases& k) {
    return casesOf(k) * (k.cases.front().problem.kind == OpKind::Gemm ? 4 : 3);
  };
  std::size_t steps = 0;
  for (const ClassCases& k : classes) steps += stepsOf(k);
  ProgressBar progress(steps, options.progress);
  progress.limitTime(options.budget_s);
  const InterruptScope interrupts;
  const auto notReached = [&](std::size_t from) {
    for (std::size_t rest = from; rest < classes.size(); ++rest)
      summary.skipped.push_back(fmt::format("{}: interrupted", classes[rest].shape_class));
  };
  for (std::size_t index = 0; index < classes.size(); ++index) {
    const ClassCases& k = classes[index];
    if (interruptRequested()) {
      notReached(index);
      break;
    }
    if (!tuner.budgetLeft()) {
      summary.skipped.push_back(fmt::format("{}: the budget of {:g} s was spent", k.shape_class, options.budget_s));
      progress.dropSteps(stepsOf(k));
      continue;
    }
    const std::vector<SuiteCase> cases = representatives(k.cases, options.cases_per_class);
    for (const SuiteCase& c : cases)
      if (c.threads > 1) summary.measured_on_one_core.push_back(fmt::format("{} (threads: {})", c.id, c.threads));
    std::vector<Problem> problems;
    for (const SuiteCase& c : cases) problems.push_back(c.problem);
    TunedClass tuned;
    tuned.isa = std::string(toString(*isa));
    tuned.shape_class = k.shape_class;
    tuned.suite = suite.name;
    // The baseline is each case's own analytic route: under an AMX cap a class
    // can hold cases on the tiles and cases the tiles would mostly pad.
    for (const SuiteCase& c : cases) {
      tuned.cases.push_back(c.id);
      tuned.analytic_schedules.push_back(mlir_backend::chooseRoute(*isa, c.problem, analytic_request).schedule.name);
    }
    const std::optional<std::string> one_analytic = commonSchedule(tuned.analytic_schedules);

    std::vector<std::string> blocks = mlir_backend::registerBlockCandidates(*isa, problems, caches, options.candidates);
    if (problems.front().kind == OpKind::Mlp) blocks = asAnMlpRunsThem(blocks);
    if (one_analytic) std::erase(blocks, *one_analytic);  // measured as the analytic routes
    blocks.insert(blocks.begin(), kAnalyticSchedule);
    Measured ranked = tuner.measure(cases, blocks, kRankTiming, progress, k.shape_class);
    tuned.measured = ranked.results;
    const TuningMeasurement* leader = best(ranked.results);
    // Variants are of a named schedule: analytic routes that differ by case have none.
    const auto leaderName = [&]() -> std::optional<std::string> {
      if (leader->schedule != kAnalyticSchedule) return leader->schedule;
      return one_analytic;
    };
    // The stages after the ranking run while the budget lasts; the bar drops those that do not.
    bool gemm_blocks_measured = false, settings_measured = false;
    if (leader && problems.front().kind == OpKind::Gemm && tuner.budgetLeft() && leaderName()) {
      std::vector<std::string> gemm_blocks = mlir_backend::gemmBlockCandidates(*leaderName(), problems.front(), caches);
      gemm_blocks.erase(gemm_blocks.begin());  // measured already
      if (!gemm_blocks.empty()) {
        Measured around = tuner.measure(cases, gemm_blocks, kRankTiming, progress, k.shape_class);
        tuned.measured.insert(tuned.measured.end(), around.results.begin(), around.results.end());
        leader = best(tuned.measured);
        gemm_blocks_measured = true;
      }
    }
    if (problems.front().kind == OpKind::Gemm && !gemm_blocks_measured) progress.dropSteps(cases.size());
    // The leader's settings: the form of its edge rows, its prefetch distance.
    if (leader && tuner.budgetLeft() && leaderName()) {
      const std::vector<std::string> settings = mlir_backend::settingCandidates(*leaderName(), problems, caches);
      if (!settings.empty()) {
        Measured variants = tuner.measure(cases, settings, kRankTiming, progress, k.shape_class);
        tuned.measured.insert(tuned.measured.end(), variants.results.begin(), variants.results.end());
        leader = best(tuned.measured);
        settings_measured = true;
      }
    }
    if (!settings_measured) progress.dropSteps(cases.size());
    if (!leader) {
      summary.skipped.push_back(fmt::format("{}: no candidate passed verification", k.shape_class));
      progress.dropSteps(cases.size());  // nothing to confirm
      continue;
    }
    // Confirm: the leader against the analytic routes, timed longer, interleaved.
    // Where they stay, the class keeps them: `run` chooses each case's route.
    tuned.schedule = kAnalyticSchedule;
    if (leader->schedule != kAnalyticSchedule) {
      const Measured confirm = tuner.measure(cases, {kAnalyticSchedule, leader->schedule}, kConfirmTiming, progress,
                                             k.shape_class + " confirm");
      tuned.analytic_gflops = confirm.results[0].gflops;
      tuned.gflops = confirm.results[1].gflops;
      if (confirm.results[1].status == "passed" && tuned.gflops > kMinGain * tuned.analytic_gflops)
        tuned.schedule = leader->schedule;
      else
        tuned.gflops = tuned.analytic_gflops;
    } else {
      tuned.analytic_gflops = tuned.gflops = leader->gflops;
      progress.dropSteps(cases.size());
    }
    if (interruptRequested()) {
      notReached(index);
      break;
    }
    // Written after each class: an interrupted tuning keeps what it measured.
    summary.tuning = putTunedClass(target, tuned, here, build, replaced);
    warnOnce();
    summary.tuned.push_back(tuned);
  }
  summary.elapsed_s = tuner.elapsed();
  summary.measurements = tuner.measurements();
  return summary;
}

}  // namespace nkbench
