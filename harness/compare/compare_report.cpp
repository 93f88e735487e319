#include "harness/compare/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "harness/compare/run_differences.h"

namespace nkbench {
namespace {

using nlohmann::json;

// The measure that decided a row, or for information the absolute one.
const Measure* shownMeasure(const RowComparison& row) {
  if (row.decided_by == "relative" && row.relative) return &*row.relative;
  return row.absolute ? &*row.absolute : nullptr;
}

std::string percent(double change) { return fmt::format("{:+.1f}%", 100.0 * change); }

std::string pValue(const Measure& m) {
  const std::optional<double>& p = m.change < 0 ? m.p_slower : m.p_faster;
  return p ? fmt::format("{:.3f}", *p) : "-";
}

json measureJson(const std::optional<Measure>& m) {
  if (!m) return nullptr;
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"base", m->base},
          {"new", m->current},
          {"change", m->change},
          {"p_slower", optional(m->p_slower)},
          {"p_faster", optional(m->p_faster)}};
}

json summaryJson(const Comparison& comparison) {
  json summary = json::object();
  for (Verdict verdict : {Verdict::Unchanged, Verdict::Improved, Verdict::Regressed, Verdict::Missing,
                          Verdict::StoppedPassing, Verdict::AddedFailing, Verdict::Added, Verdict::NotCompared,
                          Verdict::Reference})
    summary[std::string(toString(verdict))] = comparison.count(verdict);
  return summary;
}

}  // namespace

std::string formatComparison(const Comparison& comparison, const StoredRun& base, const StoredRun& current) {
  const CompareOptions& options = comparison.options;
  std::string out = fmt::format("base: {} ({})\nnew:  {} ({})\n", base.path, base.origin, current.path, current.origin);
  // The threshold is on speed: say what it is in time too, which is what the absolute rows show.
  const std::string in_time = options.threshold < 1
                                  ? fmt::format(" (its time grows by more than {:.3g}%)",
                                                100.0 * (1.0 / (1.0 - options.threshold) - 1.0))
                                  : "";
  out += fmt::format("gate: {}, a row regresses when its speed falls by more than {:.3g}%{} with p < {}; changes "
                     "below are of speed\n\n",
                     toString(options.gate), 100.0 * options.threshold, in_time, options.alpha);
  std::vector<const RowComparison*> rows;
  for (const RowComparison& row : comparison.rows) rows.push_back(&row);
  std::stable_partition(rows.begin(), rows.end(), [](const RowComparison* r) { return isFailure(r->verdict); });
  std::size_t key_width = 3;
  for (const RowComparison* row : rows) key_width = std::max(key_width, row->key.size());
  out += fmt::format("{:<{}}  {:>10}  {:>10}  {:>8}  {:>6}  {:<9}  {}\n", "row", key_width, "base", "new", "change",
                     "p", "measure", "verdict");
  for (const RowComparison* row : rows) {
    const Measure* m = shownMeasure(*row);
    // Relative: the speed as a multiple of libxsmm's; absolute: the median call time.
    const bool relative = m && row->decided_by == "relative";
    const auto value = [relative](double v) {
      return relative ? fmt::format("{:.3f}x", v) : fmt::format("{:.4g} ms", 1.0 / v);
    };
    out += fmt::format("{:<{}}  {:>10}  {:>10}  {:>8}  {:>6}  {:<9}  {}{}\n", row->key, key_width,
                       m ? value(m->base) : "-", m ? value(m->current) : "-", m ? percent(m->change) : "-",
                       m ? pValue(*m) : "-", row->decided_by.empty() ? "-" : row->decided_by, toString(row->verdict),
                       row->note.empty() ? "" : " (" + row->note + ")");
  }
  out += fmt::format("\n{} rows: {} regressed, {} missing, {} stopped passing, {} added failing, {} improved, "
                     "{} unchanged, {} added, {} not compared, {} reference\n",
                     comparison.rows.size(), comparison.count(Verdict::Regressed), comparison.count(Verdict::Missing),
                     comparison.count(Verdict::StoppedPassing), comparison.count(Verdict::AddedFailing),
                     comparison.count(Verdict::Improved),
                     comparison.count(Verdict::Unchanged), comparison.count(Verdict::Added),
                     comparison.count(Verdict::NotCompared), comparison.count(Verdict::Reference));
  const auto slowed = std::count_if(comparison.rows.begin(), comparison.rows.end(),
                                    [](const RowComparison& row) { return row.reference_slowed; });
  if (slowed > 0)
    out += fmt::format("note: libxsmm, the reference of the relative gate, was slower itself in {} row{}; "
                       "--gate both also judges the call times\n",
                       slowed, slowed == 1 ? "" : "s");
  return out;
}

json comparisonJson(const Comparison& comparison, const StoredRun& base, const StoredRun& current) {
  json rows = json::array();
  for (const RowComparison& row : comparison.rows)
    rows.push_back({{"row", row.key},
                    {"verdict", toString(row.verdict)},
                    {"failure", isFailure(row.verdict)},
                    {"decided_by", row.decided_by.empty() ? json(nullptr) : json(row.decided_by)},
                    {"absolute_speed", measureJson(row.absolute)},
                    {"ratio_to_libxsmm", measureJson(row.relative)},
                    {"base_status", row.base ? json(row.base->status) : json(nullptr)},
                    {"new_status", row.current ? json(row.current->status) : json(nullptr)},
                    {"note", row.note}});
  const CompareOptions& options = comparison.options;
  const std::string differences = runDifferences(base, current);
  return {{"base", {{"path", base.path}, {"origin", base.origin}}},
          {"new", {{"path", current.path}, {"origin", current.origin}}},
          {"runs_differ_in", differences.empty() ? json(nullptr) : json(differences)},
          {"gate", toString(options.gate)},
          {"threshold", options.threshold},
          {"alpha", options.alpha},
          {"failed", comparison.failed()},
          {"summary", summaryJson(comparison)},
          {"rows", std::move(rows)}};
}

}  // namespace nkbench
