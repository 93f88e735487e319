#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/compare/regression_check.h"

namespace nkbench {
namespace {

// Seven repetitions around `ms` with a little spread, in run order.
std::vector<double> samplesAround(double ms) {
  std::vector<double> samples;
  for (double wobble : {1.0, 1.01, 0.99, 1.005, 0.995, 1.02, 0.985}) samples.push_back(ms * wobble);
  return samples;
}

StoredRow timedRow(const std::string& backend, double ms, const std::string& case_id = "brgemm-a") {
  StoredRow row;
  row.case_id = case_id;
  row.backend = backend;
  row.dtype = "f32";
  row.c_dtype = "f32";
  row.isa = "avx512";
  row.problem = "brgemm 32x32x32 b32 beta=0";
  row.status = "passed";
  row.samples_ms = samplesAround(ms);
  row.median_ms = ms;
  return row;
}

// One case run by mlir and libxsmm; `machine` scales both (a slower machine),
// `mlir` scales mlir alone (a code change).
StoredRun run(double machine = 1.0, double mlir = 1.0) {
  StoredRun run;
  run.path = "run.json";
  run.rows = {timedRow("mlir", 0.010 * machine * mlir), timedRow("libxsmm", 0.010 * machine)};
  return run;
}

const RowComparison& rowOf(const Comparison& comparison, const std::string& backend) {
  for (const RowComparison& row : comparison.rows)
    if ((row.base ? row.base->backend : row.current->backend) == backend) return row;
  throw std::runtime_error("no row for " + backend);
}

TEST(RegressionCheck, TheSameRunTwiceHasNoFailure) {
  const Comparison comparison = compareRuns(run(), run(), {});
  EXPECT_FALSE(comparison.failed());
  EXPECT_EQ(rowOf(comparison, "mlir").verdict, Verdict::Unchanged);
  EXPECT_EQ(rowOf(comparison, "mlir").decided_by, "relative");
  EXPECT_EQ(rowOf(comparison, "libxsmm").verdict, Verdict::Reference);
}

TEST(RegressionCheck, ATenPercentSlowerKernelRegresses) {
  const Comparison comparison = compareRuns(run(), run(1.0, 1.0 / 0.9), {});
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_EQ(mlir.verdict, Verdict::Regressed);
  EXPECT_NEAR(mlir.relative->change, -0.10, 0.01);
  EXPECT_LT(*mlir.relative->p_slower, 0.01);
  EXPECT_TRUE(comparison.failed());
}

TEST(RegressionCheck, ASlowerMachineIsNotARegressionOfTheRatio) {
  const Comparison relative = compareRuns(run(), run(1.3), {});
  EXPECT_FALSE(relative.failed());
  EXPECT_NEAR(rowOf(relative, "mlir").absolute->change, 1 / 1.3 - 1, 0.01);  // measured, not gated
  CompareOptions absolute;
  absolute.gate = Gate::Absolute;
  const Comparison by_time = compareRuns(run(), run(1.3), absolute);
  EXPECT_EQ(rowOf(by_time, "mlir").verdict, Verdict::Regressed);
  EXPECT_EQ(rowOf(by_time, "libxsmm").verdict, Verdict::Regressed);
}

TEST(RegressionCheck, BothGatesFailOnEither) {
  CompareOptions both;
  both.gate = Gate::Both;
  EXPECT_EQ(rowOf(compareRuns(run(), run(1.3), both), "mlir").verdict, Verdict::Regressed);
  EXPECT_EQ(rowOf(compareRuns(run(), run(1.0, 1.0 / 0.8), both), "mlir").verdict, Verdict::Regressed);
  EXPECT_EQ(rowOf(compareRuns(run(), run(), both), "mlir").decided_by, "both");
}

TEST(RegressionCheck, SmallOrInsignificantChangesPass) {
  // 3% slower: below the 5% threshold however significant.
  EXPECT_EQ(rowOf(compareRuns(run(), run(1.0, 1.03), {}), "mlir").verdict, Verdict::Unchanged);
  // 20% slower in the median of four noisy repetitions against four: not significant at 5%.
  StoredRun noisy_base = run(), noisy_new = run(1.0, 1.2);
  for (StoredRun* r : {&noisy_base, &noisy_new})
    for (StoredRow& row : r->rows) row.samples_ms.resize(4);
  noisy_new.rows[0].samples_ms = {0.010, 0.013, 0.0121, 0.0119};
  noisy_base.rows[0].samples_ms = {0.0125, 0.0101, 0.0099, 0.0100};
  const Comparison comparison = compareRuns(noisy_base, noisy_new, {});
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_TRUE(mlir.relative->rank_test_decides);
  EXPECT_GT(*mlir.relative->p_slower, 0.05);
  EXPECT_EQ(mlir.verdict, Verdict::Unchanged);
}

// Two or three repetitions a side can never reach p < 0.05 (1/6, 1/20 at best):
// the medians decide, or a 10x slowdown would pass.
TEST(RegressionCheck, WithTooFewRepetitionsForTheRankTestEveryRepetitionMustDiffer) {
  for (std::size_t repetitions : {2u, 3u}) {
    StoredRun base = run(), slower = run(1.0, 10.0), same = run();
    for (StoredRun* r : {&base, &slower, &same})
      for (StoredRow& row : r->rows) row.samples_ms.resize(repetitions);
    const Comparison comparison = compareRuns(base, slower, {});
    const RowComparison& mlir = rowOf(comparison, "mlir");
    EXPECT_EQ(mlir.verdict, Verdict::Regressed) << repetitions;
    EXPECT_FALSE(mlir.relative->rank_test_decides);
    EXPECT_NE(mlir.note.find(fmt::format("too few repetitions for the rank test to reach --alpha ({0} against {0}): "
                                         "every repetition must differ",
                                         repetitions)),
              std::string::npos)
        << mlir.note;
    EXPECT_EQ(rowOf(compareRuns(base, same, {}), "mlir").verdict, Verdict::Unchanged) << repetitions;
    EXPECT_EQ(rowOf(compareRuns(slower, base, {}), "mlir").verdict, Verdict::Improved) << repetitions;
  }
  // Medians far apart, but one repetition of the new run as fast as the baseline's: not shown to be slower.
  StoredRun two = run(), mixed = run();
  two.rows = {timedRow("mlir", 0.010)};
  mixed.rows = {timedRow("mlir", 0.020)};
  two.rows[0].samples_ms = {0.010, 0.0101};
  mixed.rows[0].samples_ms = {0.0099, 0.030};
  CompareOptions absolute;
  absolute.gate = Gate::Absolute;
  EXPECT_EQ(rowOf(compareRuns(two, mixed, absolute), "mlir").verdict, Verdict::Unchanged);
  // A looser alpha lets three against three decide by rank again.
  StoredRun base = run(), slower = run(1.0, 10.0);
  for (StoredRun* r : {&base, &slower})
    for (StoredRow& row : r->rows) row.samples_ms.resize(3);
  CompareOptions loose;
  loose.alpha = 0.1;
  const Comparison comparison = compareRuns(base, slower, loose);
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_TRUE(mlir.relative->rank_test_decides);
  EXPECT_EQ(mlir.verdict, Verdict::Regressed);
  EXPECT_EQ(mlir.note.find("too few repetitions"), std::string::npos) << mlir.note;
}

// A stricter --alpha never flags more: below the least p the repetitions can
// give, a regression needs every repetition slower, not the medians alone.
TEST(RegressionCheck, AStricterAlphaNeverFlagsMoreRows) {
  StoredRun base = run(), overlapping = run();
  // 5.5% slower medians, but the repetitions overlap: p about 0.35.
  const std::vector<double> then = {10.0, 10.4, 9.6, 10.2, 9.8}, now = {10.55, 9.7, 11.0, 10.3, 10.9};
  base.rows = {timedRow("mlir", 10.0)};
  overlapping.rows = {timedRow("mlir", 10.55)};
  base.rows[0].samples_ms = then;
  overlapping.rows[0].samples_ms = now;
  for (double alpha : {0.05, 0.01, 0.001, 1e-6}) {
    CompareOptions options;
    options.gate = Gate::Absolute;
    options.alpha = alpha;
    EXPECT_EQ(rowOf(compareRuns(base, overlapping, options), "mlir").verdict, Verdict::Unchanged) << alpha;
  }
  // Every repetition slower: flagged at any alpha.
  StoredRun separated = overlapping;
  separated.rows[0].samples_ms = {11.0, 11.2, 10.9, 11.1, 11.3};
  separated.rows[0].median_ms = 11.1;
  for (double alpha : {0.05, 0.001, 1e-6}) {
    CompareOptions options;
    options.gate = Gate::Absolute;
    options.alpha = alpha;
    EXPECT_EQ(rowOf(compareRuns(base, separated, options), "mlir").verdict, Verdict::Regressed) << alpha;
  }
}

// The relative gate divides libxsmm's own change out of every ratio: a slower
// reference is said, not hidden, though it fails nothing.
TEST(RegressionCheck, ASlowerReferenceIsSaid) {
  StoredRun base = run(), slower = run(2.0);  // the machine (or libxsmm) at half speed, both rows
  const Comparison comparison = compareRuns(base, slower, {});
  const RowComparison& libxsmm = rowOf(comparison, "libxsmm");
  EXPECT_EQ(libxsmm.verdict, Verdict::Reference);
  EXPECT_TRUE(libxsmm.reference_slowed);
  EXPECT_NE(libxsmm.note.find("slower itself, 50.0% less speed"), std::string::npos) << libxsmm.note;
  EXPECT_FALSE(comparison.failed());
  EXPECT_FALSE(rowOf(compareRuns(base, run(), {}), "libxsmm").reference_slowed);
}

TEST(RegressionCheck, ANoisyRowsVerdictSaysSo) {
  StoredRun base = run(), noisy = run(1.0, 1.2);
  noisy.rows[0].noisy = true;
  const Comparison comparison = compareRuns(base, noisy, {});
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_EQ(mlir.verdict, Verdict::Regressed);
  EXPECT_NE(mlir.note.find("flagged noisy in the new run: its verdict is less sure"), std::string::npos) << mlir.note;
  EXPECT_EQ(rowOf(compareRuns(base, run(1.0, 1.2), {}), "mlir").note.find("noisy"), std::string::npos);
}

TEST(RegressionCheck, AFasterKernelIsAnImprovement) {
  const Comparison comparison = compareRuns(run(), run(1.0, 0.8), {});
  EXPECT_EQ(rowOf(comparison, "mlir").verdict, Verdict::Improved);
  EXPECT_FALSE(comparison.failed());
}

TEST(RegressionCheck, MissingAndStoppedPassingRowsFail) {
  StoredRun without_mlir = run();
  without_mlir.rows.erase(without_mlir.rows.begin());
  const Comparison missing = compareRuns(run(), without_mlir, {});
  EXPECT_EQ(rowOf(missing, "mlir").verdict, Verdict::Missing);
  EXPECT_TRUE(missing.failed());

  StoredRun failing = run();
  failing.rows[0].status = "failed";
  failing.rows[0].note = "3 of 1024 outputs wrong";
  failing.rows[0].median_ms.reset();
  failing.rows[0].samples_ms.clear();
  const Comparison stopped = compareRuns(run(), failing, {});
  EXPECT_EQ(rowOf(stopped, "mlir").verdict, Verdict::StoppedPassing);
  EXPECT_NE(rowOf(stopped, "mlir").note.find("3 of 1024 outputs wrong"), std::string::npos);
  EXPECT_TRUE(stopped.failed());
}

TEST(RegressionCheck, NewRowsAndRowsNotTimedBeforeDoNotFail) {
  StoredRun more = run();
  more.rows.push_back(timedRow("eigen", 0.05));
  StoredRow skipped = timedRow("onednn", 0.05);
  skipped.status = "skipped";
  skipped.note = "no bf16 C";
  more.rows.push_back(skipped);
  StoredRun skipped_before = run();
  skipped_before.rows[0].status = "skipped";
  const Comparison added = compareRuns(skipped_before, more, {});
  EXPECT_EQ(rowOf(added, "eigen").verdict, Verdict::Added);
  EXPECT_EQ(rowOf(added, "onednn").verdict, Verdict::Added);
  EXPECT_EQ(rowOf(added, "onednn").note, "skipped now: no bf16 C");
  EXPECT_EQ(rowOf(added, "mlir").verdict, Verdict::NotCompared);
  EXPECT_FALSE(added.failed());
}

TEST(RegressionCheck, ANewRowThatFailsFails) {
  for (const char* status : {"failed", "mistrusted", "error"}) {
    StoredRun more = run();
    StoredRow crashed = timedRow("eigen", 0.05);
    crashed.status = status;
    crashed.note = "worker killed by SIGSEGV";
    crashed.median_ms.reset();
    crashed.samples_ms.clear();
    more.rows.push_back(crashed);
    const Comparison comparison = compareRuns(run(), more, {});
    const RowComparison& eigen = rowOf(comparison, "eigen");
    EXPECT_EQ(eigen.verdict, Verdict::AddedFailing) << status;
    EXPECT_EQ(eigen.note, std::string(status) + " now: worker killed by SIGSEGV");
    EXPECT_TRUE(comparison.failed()) << status;
    EXPECT_EQ(comparison.count(Verdict::AddedFailing), 1);
  }
}

TEST(RegressionCheck, AChangedCaseIsNotCompared) {
  StoredRun changed = run(1.0, 2.0);
  changed.rows[0].problem = "brgemm 64x64x64 b32 beta=0";
  const Comparison comparison = compareRuns(run(), changed, {});
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_EQ(mlir.verdict, Verdict::NotCompared);
  EXPECT_NE(mlir.note.find("the case changed"), std::string::npos);
}

TEST(RegressionCheck, WithoutLibxsmmTheAbsoluteTimeDecides) {
  StoredRun base = run(), current = run(1.0, 1.0 / 0.8);
  base.rows.pop_back();
  current.rows.pop_back();
  const Comparison comparison = compareRuns(base, current, {});
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_EQ(mlir.decided_by, "absolute");
  EXPECT_EQ(mlir.verdict, Verdict::Regressed);
  EXPECT_NE(mlir.note.find("absolute time decides"), std::string::npos);
}

TEST(RegressionCheck, WithoutSamplesTheMediansDecide) {
  StoredRun base = run(), current = run(1.0, 1.0 / 0.8);
  for (StoredRun* r : {&base, &current})
    for (StoredRow& row : r->rows) row.samples_ms.clear();
  const Comparison comparison = compareRuns(base, current, {});
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_EQ(mlir.verdict, Verdict::Regressed);
  EXPECT_FALSE(mlir.relative->p_slower.has_value());
  EXPECT_NE(mlir.note.find("medians alone decide"), std::string::npos);
}

TEST(RegressionCheck, ADifferentLevelUsedIsNoted) {
  StoredRun base = run(), current = run();
  base.rows[0].isa_used = "avx512";
  current.rows[0].isa_used = "avx512-bf16";
  const Comparison comparison = compareRuns(base, current, {});
  const RowComparison& mlir = rowOf(comparison, "mlir");
  EXPECT_EQ(mlir.verdict, Verdict::Unchanged);  // still matched: by the cap, as before
  EXPECT_NE(mlir.note.find("ISA used changed: avx512 then, avx512-bf16 now"), std::string::npos) << mlir.note;
}

TEST(RegressionCheck, AnUnknownLevelUsedIsNotAChange) {
  StoredRun base = run(), current = run();  // base: a report from before isa_used
  current.rows[0].isa_used = "avx512";
  EXPECT_EQ(rowOf(compareRuns(base, current, {}), "mlir").note.find("ISA used"), std::string::npos);
}

TEST(RegressionCheck, ThresholdIsConfigurable) {
  CompareOptions lenient;
  lenient.threshold = 0.25;
  EXPECT_EQ(rowOf(compareRuns(run(), run(1.0, 1.0 / 0.8), lenient), "mlir").verdict, Verdict::Unchanged);
  EXPECT_EQ(rowOf(compareRuns(run(), run(1.0, 1.0 / 0.6), lenient), "mlir").verdict, Verdict::Regressed);
}

TEST(RegressionCheck, GateNamesRoundTrip) {
  for (Gate gate : {Gate::Relative, Gate::Absolute, Gate::Both}) EXPECT_EQ(parseGate(toString(gate)), gate);
  EXPECT_FALSE(parseGate("median").has_value());
}

}  // namespace
}  // namespace nkbench
