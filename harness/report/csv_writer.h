// CSV report: one line per (case, backend) result, written as soon as it exists.
#pragma once

#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

#include "harness/report/result_row.h"

namespace nkbench {

// Column names in file order (meanings: README.md, "Output columns").
std::span<const std::string_view> csvColumns();

// One record without its line end: fields quoted per RFC 4180 where needed.
// Measurements that were not taken (e.g. timings of a skipped row) are empty.
std::string csvRecord(const ResultRow& row);

// Writes the header on construction, then one record per write(). Every record
// is flushed at once, so rows already measured survive a later crash.
class CsvWriter {
 public:
  explicit CsvWriter(const std::filesystem::path& path);  // truncates; throws Error
  void write(const ResultRow& row);                       // throws Error when the write fails
  const std::filesystem::path& path() const { return path_; }

 private:
  void writeLine(const std::string& line);

  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace nkbench
