// The timings in Google Benchmark's JSON output format (--benchmark_format=json),
// so that google/benchmark's tools/compare.py can compare two nkbench runs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/result_row.h"

namespace nkbench {

// The benchmark name of a row: "CASE/BACKEND", then "/threads:N" above one thread
// as Google Benchmark names its thread counts; unique within a run (a run has one
// ISA, and a case id fixes the types).
std::string gbenchName(const ResultRow& row);

// {"context": {...}, "benchmarks": [...]}: per passed row, one "iteration" entry per
// repetition (per-call real_time in ns, cpu_time equal to it: nkbench measures wall
// time only), then, from two repetitions on, the "aggregate" entries mean, median,
// stddev and cv as Google Benchmark computes them. A "GFLOPS" counter rides on
// every entry. Rows that did not pass are left out: they have no timings.
nlohmann::json toGbenchJson(const RunMetadata& metadata, const std::vector<ResultRow>& rows);

// Replaces `path` atomically; throws Error on failure.
void writeGbenchJsonFile(const std::filesystem::path& path, const RunMetadata& metadata,
                         const std::vector<ResultRow>& rows);

}  // namespace nkbench
