#include "harness/compare/stored_run.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "harness/core/error.h"
#include "harness/report/json/json_reader.h"

namespace nkbench {
namespace {

StoredRow storedRowOf(const ResultRow& row) {
  const Problem& problem = row.problem;
  StoredRow stored;
  stored.case_id = row.case_id;
  stored.backend = row.backend;
  stored.dtype = std::string(toString(problem.dtype));
  stored.c_dtype = std::string(toString(problem.c_dtype));
  stored.isa = row.isa;
  stored.isa_used = row.isa_used;
  stored.threads = row.threads;
  stored.status = std::string(toString(row.status));
  stored.note = row.note;
  stored.problem = problem.kind == OpKind::Mlp
                       ? problem.describe()
                       : fmt::format("{} {}x{}x{} b{} beta={}", toString(problem.kind), problem.m, problem.n, problem.k,
                                     problem.batch, problem.accumulate ? 1 : 0);
  if (row.timed()) stored.median_ms = row.median_ms;
  stored.samples_ms = row.samples_ms;
  stored.noisy = row.noisy;
  return stored;
}

bool isTime(double ms) { return std::isfinite(ms) && ms > 0.0; }

// A passed row without a usable time would compare as infinitely fast or slow,
// or as unchanged: the report is broken, not the kernel.
void checkTimes(const StoredRow& row, const std::string& path, std::size_t number) {
  if (!row.passed()) return;
  const std::string where = fmt::format("{}: row {} ('{}') passed", path, number, row.key());
  if (!isTime(*row.median_ms))
    throw Error(fmt::format("{} but its median_ms is {}: expected a positive time", where,
                            *row.median_ms == 0.0 ? "missing, null or 0" : fmt::format("{}", *row.median_ms)));
  for (std::size_t i = 0; i < row.samples_ms.size(); ++i)
    if (!isTime(row.samples_ms[i]))
      throw Error(
          fmt::format("{} but its samples_ms[{}] is {}: expected a positive time", where, i, row.samples_ms[i]));
}

std::string orUnknown(const std::string& text, const char* unknown) { return text.empty() ? unknown : text; }

}  // namespace

std::string StoredRow::key() const {
  const std::string type = c_dtype == "f32" ? dtype : dtype + "->" + c_dtype;
  const std::string threads_part = threads > 1 ? fmt::format(" {} threads", threads) : "";
  return fmt::format("{} {} {} {}{}", case_id, backend, type, isa, threads_part);
}

StoredRun loadStoredRun(const std::filesystem::path& path) { return storedRunOf(readJsonReport(path), path.string()); }

StoredRun storedRunOf(const JsonReport& report, const std::string& path) {
  StoredRun run;
  run.path = path;
  run.metadata = report.metadata;
  const RunMetadata& metadata = report.metadata;
  run.origin = fmt::format("{}, {}, commit {}", orUnknown(metadata.cpu_model, "unknown CPU"),
                           orUnknown(metadata.date, "unknown date"), orUnknown(metadata.git_commit, "unknown"));
  std::set<std::string> keys;
  for (const ResultRow& row : report.rows) {
    run.rows.push_back(storedRowOf(row));
    checkTimes(run.rows.back(), path, run.rows.size());
    if (!keys.insert(run.rows.back().key()).second)
      throw Error(fmt::format("{}: row '{}' appears twice", path, run.rows.back().key()));
  }
  if (run.rows.empty()) throw Error(fmt::format("{}: the report has no rows", path));
  return run;
}

}  // namespace nkbench
