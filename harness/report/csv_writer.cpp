#include "harness/report/csv_writer.h"

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench {
namespace {

// Grouped as: the case, where it ran, what ran, timings, one-time costs, verification.
constexpr std::array<std::string_view, 37> kColumns = {
    "suite", "case", "kind", "dtype", "c_dtype", "m", "n", "k", "batch", "beta", "layers", "epilogue",
    "isa", "isa_used", "backend", "threads",
    "register_block", "schedule", "schedule_source", "implementation", "nanokernel",
    "repetitions", "median_gflops", "best_gflops", "median_ms", "best_ms", "stddev_ms",
    "iqr_ms", "noisy", "peak_fraction", "ratio_to_libxsmm",
    "compile_ms", "kernel_cache", "pack_ms",
    "status", "max_error", "note"};

// RFC 4180: a field holding a comma, quote or line break is quoted, quotes doubled.
std::string csvField(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string gflops(double value) { return fmt::format("{:.2f}", value); }
std::string milliseconds(double value) { return fmt::format("{:.4g}", value); }

}  // namespace

std::span<const std::string_view> csvColumns() { return kColumns; }

std::string csvRecord(const ResultRow& row) {
  const Problem& problem = row.problem;
  const bool timed = row.timed();
  const auto if_timed = [timed](std::string text) { return timed ? text : std::string(); };

  const std::array<std::string, kColumns.size()> fields = {
      csvField(row.suite),
      csvField(row.case_id),
      std::string(toString(problem.kind)),
      std::string(toString(problem.dtype)),
      std::string(toString(problem.c_dtype)),
      std::to_string(problem.m),
      std::to_string(problem.n),
      std::to_string(problem.k),
      std::to_string(problem.batch),
      problem.accumulate ? "1" : "0",
      problem.kind == OpKind::Mlp ? problem.mlp.widthsText() : std::string(),
      csvField(problem.mlp.epilogueText()),
      csvField(row.isa),
      csvField(row.isa_used),
      csvField(row.backend),
      std::to_string(row.threads),
      csvField(row.register_block),
      csvField(row.schedule),
      csvField(row.schedule_source),
      csvField(row.implementation),
      csvField(row.nanokernel),
      if_timed(std::to_string(row.repetitions)),
      if_timed(gflops(row.median_gflops)),
      if_timed(gflops(row.best_gflops)),
      if_timed(milliseconds(row.median_ms)),
      if_timed(milliseconds(row.best_ms)),
      if_timed(milliseconds(row.stddev_ms)),
      if_timed(milliseconds(row.iqr_ms)),
      if_timed(row.noisy ? "1" : "0"),
      if_timed(fmt::format("{:.3f}", row.peak_fraction)),
      timed && row.ratio_to_libxsmm ? fmt::format("{:.3f}", *row.ratio_to_libxsmm) : std::string(),
      milliseconds(row.compile_ms),
      csvField(row.kernel_cache),
      milliseconds(row.pack_ms),
      std::string(toString(row.status)),
      row.verified() ? fmt::format("{:.3g}", row.max_error) : std::string(),
      csvField(row.note)};

  std::string record;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) record += ',';
    record += fields[i];
  }
  return record;
}

CsvWriter::CsvWriter(const std::filesystem::path& path) : path_(path), out_(path, std::ios::trunc) {
  if (!out_) {
    throw Error(
        fmt::format("{}: cannot write CSV report: {}", path_.string(), std::strerror(errno)));
  }
  std::string header;
  for (std::string_view column : kColumns) {
    if (!header.empty()) header += ',';
    header += column;
  }
  writeLine(header);
}

void CsvWriter::write(const ResultRow& row) { writeLine(csvRecord(row)); }

void CsvWriter::writeLine(const std::string& line) {
  out_ << line << '\n';
  out_.flush();
  if (!out_) {
    throw Error(
        fmt::format("{}: writing the CSV report failed: {}", path_.string(), std::strerror(errno)));
  }
}

}  // namespace nkbench
