// A run as nkbench wrote it to JSON, read back for comparison.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/report/result_row.h"

namespace nkbench {

struct JsonReport;

struct StoredRow {
  std::string case_id;
  std::string backend;
  std::string dtype;    // A and B
  std::string c_dtype;  // "f32" when the report predates the column
  std::string isa;
  std::string isa_used; // level the backend's code used; empty when unknown (older reports) or not prepared
  int threads = 1;
  std::string problem;  // "brgemm 64x64x64 b32 beta=1": tells a changed case from the same one
  std::string status;   // passed, failed, mistrusted, skipped, error
  std::string note;
  std::optional<double> median_ms;  // passed rows only
  std::vector<double> samples_ms;   // per-repetition call times in run order; empty in older reports
  bool noisy = false;               // flagged by its run (its spread, or faster than the peak)

  // "case backend dtype->c_dtype isa", then "N threads" above one: what a row
  // is matched by across runs.
  std::string key() const;
  bool passed() const { return status == "passed"; }
};

struct StoredRun {
  std::string path;
  std::string origin;  // "CPU, date, commit", for the report
  RunMetadata metadata;
  std::vector<StoredRow> rows;
};

// Throws nkbench::Error naming the file when it cannot be read, is not an nkbench
// JSON report, has no rows, holds one row key twice, or has a passed row whose
// median or a sample is not a positive, finite time (naming the row).
StoredRun loadStoredRun(const std::filesystem::path& path);
// The same for a report already read; `path` names it in messages.
StoredRun storedRunOf(const JsonReport& report, const std::string& path);

}  // namespace nkbench
