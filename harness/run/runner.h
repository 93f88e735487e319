// Runs a suite: for every case and backend, prepare, verify, then time.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/isa.h"
#include "harness/report/result_row.h"
#include "harness/run/operand_sets.h"
#include "harness/run/timing.h"
#include "harness/suite/shard.h"
#include "harness/suite/suite.h"
#include "operands/fill.h"

namespace nkbench {

struct RunOptions {
  std::vector<std::string> backends;  // in report order
  std::optional<Isa> isa;             // nullopt: the best the host has
  std::string mlir_schedule;          // empty: tuned or analytic (see tuning)
  std::string tuning = "auto";        // --tuning: FILE, none or auto (tuning_selection.h)
  std::string kernel_cache_dir;       // mlir's kernel cache; empty: off
  // Each case is run at each of these thread counts (one thread per core), but
  // for a case whose suite sets its own.
  std::vector<int> threads = {1};
  std::string filter;                 // regex on case ids; empty: all
  std::optional<Shard> shard;         // run only this shard of the filtered cases
  TimingOptions timing;
  FillMode fill = FillMode::ExactInteger;
  std::string csv_path;               // empty: no CSV
  std::string json_path;              // empty: no JSON
  std::string benchmark_json_path;    // empty: no Google Benchmark JSON
  std::string command_line;
  bool progress = true;               // a progress bar on stderr when it is a terminal
  // A row whose call times have an interquartile range above this fraction of
  // their median is flagged noisy.
  double noisy_iqr_fraction = 0.05;
  // Hot: every call on the same operands, as kernels run inside a blocked
  // layer. Cold: operand sets spanning cold_rotation_bytes (0: twice the
  // last-level cache) are used in turn.
  CacheMode cache = CacheMode::Hot;
  std::int64_t cold_rotation_bytes = 0;
  // Cases in a worker process (isolated_case.h): a crashing or hanging kernel
  // costs its own row. Off: in process, for a debugger or a profiler.
  bool isolate = true;
  double case_timeout_s = 600.0;  // per case, isolated only; 0: none
};

struct RunSummary {
  RunMetadata metadata;
  std::vector<ResultRow> rows;
  std::size_t cases = 0;  // cases run: those of the shard when sharded
  int failures = 0;  // rows that failed verification, were mistrusted, or errored
  bool interrupted = false;  // SIGINT or SIGTERM stopped the run after `rows`
};

// Cases whose id matches `filter` (std::regex search); throws nkbench::Error for a bad regex.
std::vector<SuiteCase> selectCases(const Suite& suite, const std::string& filter);

// Throws nkbench::Error for bad options (unknown backend, ISA the host lacks) before running anything.
// Rows are written to CSV/JSON as each case completes, so a later failure loses nothing measured;
// the reports exist from the start, so a shard without cases still leaves valid, empty ones.
RunSummary runSuite(const Suite& suite, const RunOptions& options);

// A case's thread counts: its own `threads`, or the ones requested (--threads).
std::vector<int> threadCountsOf(const SuiteCase& c, const std::vector<int>& requested);

// The thread counts `cases` run at, each once, in order. Error where this
// process has too few cores for one: checked for every case of `selected` (the
// whole selection, not a shard's, so that every shard says the same), a case's
// own count naming its file:line.
std::vector<int> threadCountsToRun(const Suite& suite, const std::vector<SuiteCase>& selected,
                                   const std::vector<SuiteCase>& cases, const std::vector<int>& requested);

}  // namespace nkbench
