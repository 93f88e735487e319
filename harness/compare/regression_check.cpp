#include "harness/compare/regression_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "harness/compare/rank_test.h"
#include "harness/core/statistics.h"

namespace nkbench {
namespace {

constexpr std::string_view kReferenceBackend = "libxsmm";

// Per-repetition samples of a speed-like quantity, or only its median for
// reports without samples.
struct Samples {
  std::vector<double> values;
  double median = 0.0;
};

Samples speedOf(const StoredRow& row) {
  Samples speed;
  for (double ms : row.samples_ms) speed.values.push_back(1.0 / ms);
  speed.median = speed.values.empty() ? 1.0 / *row.median_ms : median(speed.values);
  return speed;
}

// Repetition i of a row ran right after repetition i of libxsmm: their ratio
// cancels what the machine was doing at the time.
Samples ratioToReference(const StoredRow& row, const StoredRow& reference) {
  Samples ratio;
  const std::size_t n = std::min(row.samples_ms.size(), reference.samples_ms.size());
  for (std::size_t i = 0; i < n; ++i) ratio.values.push_back(reference.samples_ms[i] / row.samples_ms[i]);
  ratio.median = ratio.values.empty() ? *reference.median_ms / *row.median_ms : median(ratio.values);
  return ratio;
}

Measure measure(const Samples& base, const Samples& current, const CompareOptions& options) {
  Measure m;
  m.base = base.median;
  m.current = current.median;
  m.change = current.median / base.median - 1.0;
  m.base_samples = base.values.size();
  m.current_samples = current.values.size();
  if (!base.values.empty() && !current.values.empty()) {
    m.p_slower = probabilityNotSmaller(current.values, base.values);
    m.p_faster = probabilityNotSmaller(base.values, current.values);
    m.p_smallest = smallestPossibleP(m.current_samples, m.base_samples);
    m.rank_test_decides = *m.p_smallest < options.alpha;
  }
  return m;
}

// Whether the rank test's p says so: below alpha; or, where the repetitions are
// too few ever to go below it, the least p they can give (every repetition on
// that side of every other), so that a stricter alpha never flags more rows.
// Without samples the medians alone decide: a 10x slowdown must fail anyway.
bool significant(const Measure& m, const std::optional<double>& p, const CompareOptions& options) {
  if (!p) return true;
  if (m.rank_test_decides) return *p < options.alpha;
  return *p <= *m.p_smallest * (1 + 1e-9);
}
bool slower(const Measure& m, const CompareOptions& options) {
  return m.change < -options.threshold && significant(m, m.p_slower, options);
}
bool faster(const Measure& m, const CompareOptions& options) {
  return m.change > options.threshold && significant(m, m.p_faster, options);
}

void addNote(RowComparison& result, const std::string& note) {
  if (!result.note.empty()) result.note += "; ";
  result.note += note;
}

// Rows of one run by key, and each case's libxsmm row.
class RunIndex {
 public:
  explicit RunIndex(const StoredRun& run) {
    for (const StoredRow& row : run.rows) {
      by_key_.emplace(row.key(), &row);
      if (row.backend == kReferenceBackend && row.passed() && row.median_ms) reference_.emplace(caseKey(row), &row);
    }
  }
  const StoredRow* find(const std::string& key) const {
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : it->second;
  }
  const StoredRow* referenceFor(const StoredRow& row) const {
    const auto it = reference_.find(caseKey(row));
    return it == reference_.end() ? nullptr : it->second;
  }

 private:
  static std::string caseKey(const StoredRow& row) {
    return fmt::format("{} {} {} {} {}", row.case_id, row.dtype, row.c_dtype, row.isa, row.threads);
  }
  std::map<std::string, const StoredRow*> by_key_;
  std::map<std::string, const StoredRow*> reference_;
};

void judgeTimedRows(RowComparison& result, const RunIndex& base_index, const RunIndex& current_index,
                    const CompareOptions& options) {
  const StoredRow& base = *result.base;
  const StoredRow& current = *result.current;
  result.absolute = measure(speedOf(base), speedOf(current), options);
  const StoredRow* base_reference = base_index.referenceFor(base);
  const StoredRow* current_reference = current_index.referenceFor(current);
  const bool is_reference = base.backend == kReferenceBackend;
  if (base_reference && current_reference && !is_reference)
    result.relative = measure(ratioToReference(base, *base_reference), ratioToReference(current, *current_reference),
                              options);

  std::vector<const Measure*> deciding;
  if (options.gate == Gate::Relative && is_reference) {
    result.verdict = Verdict::Reference;
    // The ratios divide its change out of every row of the case: say it, the machine or the library changed.
    result.reference_slowed = slower(*result.absolute, options);
    if (result.reference_slowed)
      addNote(result, fmt::format("slower itself, {:.1f}% less speed: the ratios of this case hide it",
                                  -100.0 * result.absolute->change));
    return;
  }
  if (options.gate != Gate::Absolute && result.relative) {
    deciding.push_back(&*result.relative);
    result.decided_by = "relative";
  }
  if (options.gate != Gate::Relative || !result.relative) {
    deciding.push_back(&*result.absolute);
    result.decided_by = deciding.size() == 2 ? "both" : "absolute";
    if (options.gate == Gate::Relative) result.note = "no libxsmm row in both runs: absolute time decides";
  }
  const bool any_slower = std::any_of(deciding.begin(), deciding.end(), [&](const Measure* m) { return slower(*m, options); });
  const bool all_faster = std::all_of(deciding.begin(), deciding.end(), [&](const Measure* m) { return faster(*m, options); });
  result.verdict = any_slower ? Verdict::Regressed : all_faster ? Verdict::Improved : Verdict::Unchanged;
  if (base.samples_ms.empty() || current.samples_ms.empty()) {
    addNote(result, "no per-repetition samples: medians alone decide");
    return;
  }
  for (const Measure* m : deciding)
    if (!m->rank_test_decides) {
      addNote(result, fmt::format("too few repetitions for the rank test to reach --alpha ({} against {}): "
                                  "every repetition must differ",
                                  m->base_samples, m->current_samples));
      return;
    }
}

// Rows match by the run's cap; under one cap a backend may still have run code of
// another level (a library update, another host). Unknown (older reports): silent.
void noteLevelChange(RowComparison& result) {
  const std::string& then = result.base->isa_used;
  const std::string& now = result.current->isa_used;
  if (then.empty() || now.empty() || then == now) return;
  addNote(result, fmt::format("ISA used changed: {} then, {} now", then, now));
}

RowComparison compareRow(const StoredRow& base, const RunIndex& base_index, const RunIndex& current_index,
                         const CompareOptions& options) {
  RowComparison result;
  result.key = base.key();
  result.base = base;
  const StoredRow* current = current_index.find(result.key);
  if (current) result.current = *current;
  if (!base.passed()) {
    result.verdict = Verdict::NotCompared;
    result.note = fmt::format("{} in the baseline", base.status);
  } else if (!current) {
    result.verdict = Verdict::Missing;
    result.note = "not in the new run";
  } else if (current->problem != base.problem) {
    result.verdict = Verdict::NotCompared;
    result.note = fmt::format("the case changed: {} then, {} now", base.problem, current->problem);
  } else if (!current->passed()) {
    result.verdict = Verdict::StoppedPassing;
    result.note = fmt::format("{} now: {}", current->status, current->note);
  } else {
    judgeTimedRows(result, base_index, current_index, options);
    noteLevelChange(result);
    if (base.noisy || current->noisy)
      addNote(result, fmt::format("flagged noisy in {}: its verdict is less sure",
                                  base.noisy && current->noisy ? "both runs" : base.noisy ? "the baseline" : "the new run"));
  }
  return result;
}

// A new case that fails or crashes is a regression a CI job must see; a skip
// (a backend without the case's type) is not.
RowComparison addedRow(const StoredRow& row) {
  RowComparison added;
  added.key = row.key();
  added.current = row;
  if (row.passed()) {
    added.verdict = Verdict::Added;
    return added;
  }
  added.verdict = row.status == "skipped" ? Verdict::Added : Verdict::AddedFailing;
  added.note = fmt::format("{} now{}", row.status, row.note.empty() ? "" : ": " + row.note);
  return added;
}

}  // namespace

std::string_view toString(Gate gate) {
  switch (gate) {
    case Gate::Relative: return "relative";
    case Gate::Absolute: return "absolute";
    case Gate::Both: return "both";
  }
  return "?";
}

std::optional<Gate> parseGate(std::string_view text) {
  for (Gate gate : {Gate::Relative, Gate::Absolute, Gate::Both})
    if (text == toString(gate)) return gate;
  return std::nullopt;
}

std::string_view toString(Verdict verdict) {
  switch (verdict) {
    case Verdict::Unchanged: return "unchanged";
    case Verdict::Improved: return "improved";
    case Verdict::Regressed: return "REGRESSED";
    case Verdict::Missing: return "MISSING";
    case Verdict::StoppedPassing: return "STOPPED PASSING";
    case Verdict::Added: return "added";
    case Verdict::AddedFailing: return "ADDED FAILING";
    case Verdict::NotCompared: return "not compared";
    case Verdict::Reference: return "reference";
  }
  return "?";
}

bool isFailure(Verdict verdict) {
  return verdict == Verdict::Regressed || verdict == Verdict::Missing || verdict == Verdict::StoppedPassing ||
         verdict == Verdict::AddedFailing;
}

int Comparison::count(Verdict verdict) const {
  return int(std::count_if(rows.begin(), rows.end(), [verdict](const RowComparison& r) { return r.verdict == verdict; }));
}

bool Comparison::failed() const {
  return std::any_of(rows.begin(), rows.end(), [](const RowComparison& r) { return isFailure(r.verdict); });
}

Comparison compareRuns(const StoredRun& base, const StoredRun& current, const CompareOptions& options) {
  const RunIndex base_index(base), current_index(current);
  Comparison comparison;
  comparison.options = options;
  for (const StoredRow& row : base.rows) comparison.rows.push_back(compareRow(row, base_index, current_index, options));
  for (const StoredRow& row : current.rows)
    if (!base_index.find(row.key())) comparison.rows.push_back(addedRow(row));
  return comparison;
}

}  // namespace nkbench
