// Compares two runs row by row and decides which rows regressed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/compare/stored_run.h"

namespace nkbench {

// What decides a regression. Relative: each row's speed as a ratio to libxsmm
// in the same case and repetition (they ran interleaved, so machine noise and
// a different machine of the same kind largely cancel); libxsmm's own rows are
// then the reference, and rows of cases without libxsmm fall back to absolute.
// Absolute: call times. Both: either one.
enum class Gate { Relative, Absolute, Both };
std::string_view toString(Gate gate);
std::optional<Gate> parseGate(std::string_view text);

struct CompareOptions {
  double threshold = 0.05;  // a slowdown must exceed this fraction of the baseline...
  double alpha = 0.05;      // ...and be significant at this level (one-sided rank test)
  Gate gate = Gate::Relative;
};

enum class Verdict {
  Unchanged,
  Improved,
  Regressed,
  Missing,         // in the baseline, not in the new run
  StoppedPassing,  // passed in the baseline; failed, mistrusted, errored or skipped now
  Added,           // only in the new run (passed, or skipped)
  AddedFailing,    // only in the new run, and failed, mistrusted or errored there
  NotCompared,     // not timed in the baseline
  Reference,       // libxsmm under the relative gate
};
std::string_view toString(Verdict verdict);
bool isFailure(Verdict verdict);

// One speed-like measure (higher is better) of a row in both runs.
struct Measure {
  double base = 0.0;      // median
  double current = 0.0;   // median
  double change = 0.0;    // current / base - 1: -0.1 = 10% slower
  std::optional<double> p_slower;  // rank test of "current is slower"; none without samples
  std::optional<double> p_faster;
  std::size_t base_samples = 0, current_samples = 0;  // repetitions the rank test compared
  std::optional<double> p_smallest;  // the least p these repetitions can give
  // Whether the rank test can reach p < alpha with these repetitions at all (2
  // against 2 never go below 1/6): when not, every repetition must be on one
  // side of every other (p_smallest); without samples the medians decide.
  bool rank_test_decides = false;
};

struct RowComparison {
  std::string key;
  std::optional<StoredRow> base, current;
  Verdict verdict = Verdict::Unchanged;
  std::optional<Measure> absolute;  // speed = 1 / call time
  std::optional<Measure> relative;  // libxsmm time / row time, per repetition
  std::string decided_by;           // "relative", "absolute", "both", or empty
  std::string note;
  bool reference_slowed = false;    // the relative gate's reference row, slower itself by the gate's test
};

struct Comparison {
  CompareOptions options;
  std::vector<RowComparison> rows;  // baseline order, then rows added in the new run
  int count(Verdict verdict) const;
  bool failed() const;  // any regression, missing row, row that stopped passing or new row that fails
};

Comparison compareRuns(const StoredRun& base, const StoredRun& current, const CompareOptions& options);

}  // namespace nkbench
