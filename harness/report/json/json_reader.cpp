#include "harness/report/json/json_reader.h"

#include <charconv>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "harness/core/error.h"
#include "harness/report/json/json_value.h"

namespace nkbench {
namespace {

using nlohmann::json;

// `object[key]` when present and not null (a measurement not taken), else `fallback`.
template <typename T>
T valueOr(const json& object, const char* key, T fallback) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? fallback : jsonValue<T>(*it, key);
}

template <typename T>
T required(const json& object, const char* key) {
  return jsonValue<T>(object.at(key), key);
}

template <typename T>
T parsed(std::optional<T> value, const char* key, const std::string& text) {
  if (!value) throw Error(fmt::format("unknown {} '{}'", key, text));
  return *value;
}

// "peaks_by_threads": {"2": {"fp32": ..., "bf16": ...}}, each key a thread count above one.
std::map<int, ThreadPeaks> peaksByThreads(const json& metadata) {
  std::map<int, ThreadPeaks> peaks;
  const auto it = metadata.find("peaks_by_threads");
  if (it == metadata.end() || it->is_null()) return peaks;
  if (!it->is_object()) throw Error("peaks_by_threads: expected an object of thread counts");
  for (const auto& [key, peak] : it->items()) {
    int threads = 0;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), threads);
    if (error != std::errc() || end != key.data() + key.size() || threads < 2)
      throw Error(fmt::format("peaks_by_threads: '{}' is not a thread count above 1", key));
    if (!peak.is_object()) throw Error(fmt::format("peaks_by_threads: {} threads: expected an object", threads));
    peaks[threads] = {valueOr(peak, "fp32", 0.0), valueOr(peak, "bf16", 0.0)};
  }
  return peaks;
}

// An mlp row's "layers" ("1024-1024-1024") and "epilogue" ("bias+relu").
void readMlpLayers(const json& row, MlpLayers& layers) {
  const std::string widths = required<std::string>(row, "layers");
  const auto parsed_widths = parseMlpWidths(widths);
  if (!parsed_widths) throw Error(fmt::format("'layers' '{}': expected two or more widths such as 1024-1024", widths));
  layers.widths = *parsed_widths;
  const std::string epilogue = valueOr<std::string>(row, "epilogue", "");
  if (!parseMlpEpilogue(epilogue, layers))
    throw Error(fmt::format("'epilogue' '{}': expected bias+relu, bias, relu or nothing", epilogue));
}

}  // namespace

ResultRow rowFromJson(const json& row) {
  ResultRow result;
  try {
    result.suite = valueOr<std::string>(row, "suite", "");
    result.case_id = required<std::string>(row, "case");
    Problem& problem = result.problem;
    const std::string kind = required<std::string>(row, "kind");
    const std::string dtype = required<std::string>(row, "dtype");
    const std::string c_dtype = valueOr<std::string>(row, "c_dtype", "f32");
    problem.kind = parsed(parseOpKind(kind), "kind", kind);
    problem.dtype = parsed(parseDType(dtype), "dtype", dtype);
    problem.c_dtype = parsed(parseDType(c_dtype), "c_dtype", c_dtype);
    problem.m = required<std::int64_t>(row, "m");
    problem.n = required<std::int64_t>(row, "n");
    problem.k = required<std::int64_t>(row, "k");
    problem.batch = required<std::int64_t>(row, "batch");
    const int beta = required<int>(row, "beta");
    if (beta != 0 && beta != 1) throw Error(fmt::format("'beta' must be 0 or 1, got {}", beta));
    problem.accumulate = beta == 1;
    if (problem.kind == OpKind::Mlp) readMlpLayers(row, problem.mlp);
    result.isa = required<std::string>(row, "isa");
    // Reports from before the column say nothing of the level used.
    result.isa_used = valueOr<std::string>(row, "isa_used", "");
    result.backend = required<std::string>(row, "backend");
    result.threads = valueOr(row, "threads", 1);
    if (result.threads < 1) throw Error(fmt::format("'threads' must be 1 or more, got {}", result.threads));
    result.register_block = valueOr<std::string>(row, "register_block", "");
    result.schedule = valueOr<std::string>(row, "schedule", "");
    result.schedule_source = valueOr<std::string>(row, "schedule_source", "");
    result.implementation = valueOr<std::string>(row, "implementation", "");
    result.nanokernel = valueOr<std::string>(row, "nanokernel", "");
    result.repetitions = valueOr(row, "repetitions", 0);
    result.median_gflops = valueOr(row, "median_gflops", 0.0);
    result.best_gflops = valueOr(row, "best_gflops", 0.0);
    result.median_ms = valueOr(row, "median_ms", 0.0);
    result.best_ms = valueOr(row, "best_ms", 0.0);
    result.stddev_ms = valueOr(row, "stddev_ms", 0.0);
    result.iqr_ms = valueOr(row, "iqr_ms", 0.0);
    result.noisy = valueOr(row, "noisy", false);
    result.samples_ms = valueOr(row, "samples_ms", std::vector<double>{});
    result.samples_iterations = valueOr(row, "samples_iterations", std::vector<std::int64_t>{});
    result.peak_fraction = valueOr(row, "peak_fraction", 0.0);
    if (const auto ratio = row.find("ratio_to_libxsmm"); ratio != row.end() && !ratio->is_null())
      result.ratio_to_libxsmm = jsonValue<double>(*ratio, "ratio_to_libxsmm");
    result.compile_ms = valueOr(row, "compile_ms", 0.0);
    result.kernel_cache = valueOr<std::string>(row, "kernel_cache", "");
    result.pack_ms = valueOr(row, "pack_ms", 0.0);
    const std::string status = required<std::string>(row, "status");
    result.status = parsed(parseVerifyStatus(status), "status", status);
    // JSON has no NaN: the writer turns a non-finite error of a verified row into null.
    if (const auto error = row.find("max_error"); error != row.end())
      result.max_error = !error->is_null()   ? jsonValue<double>(*error, "max_error")
                         : result.verified() ? std::numeric_limits<double>::quiet_NaN()
                                             : 0.0;
    result.note = valueOr<std::string>(row, "note", "");
  } catch (const json::exception& error) {
    throw Error(error.what());
  }
  return result;
}

RunMetadata metadataFromJson(const json& metadata) {
  RunMetadata result;
  try {
    result.suite = valueOr<std::string>(metadata, "suite", "");
    result.selected_cases = valueOr(metadata, "selected_cases", std::vector<std::string>{});
    result.shard = valueOr<std::string>(metadata, "shard", "");
    result.cpu_model = valueOr<std::string>(metadata, "cpu_model", "");
    result.isa_flags = valueOr(metadata, "isa_flags", std::vector<std::string>{});
    result.measured_clock_ghz = valueOr(metadata, "measured_clock_ghz", 0.0);
    result.peak_gflops = valueOr(metadata, "peak_gflops", 0.0);
    result.bf16_peak_gflops = valueOr(metadata, "bf16_peak_gflops", 0.0);
    result.bf16_peak_instruction = valueOr<std::string>(metadata, "bf16_peak_instruction", "");
    result.isa = valueOr<std::string>(metadata, "isa", "");
    result.compiler = valueOr<std::string>(metadata, "compiler", "");
    result.library_versions =
        valueOr(metadata, "library_versions", std::map<std::string, std::string>{});
    result.git_commit = valueOr<std::string>(metadata, "git_commit", "");
    result.date = valueOr<std::string>(metadata, "date", "");
    result.command_line = valueOr<std::string>(metadata, "command_line", "");
    result.hostname = valueOr<std::string>(metadata, "hostname", "");
    result.threads = valueOr(metadata, "threads", 1);
    result.thread_counts = valueOr(metadata, "thread_counts", std::vector<int>{});
    result.requested_threads = valueOr(metadata, "requested_threads", std::vector<int>{});
    result.case_threads = valueOr(metadata, "case_threads", std::map<std::string, int>{});
    result.cores = valueOr(metadata, "cores", std::vector<int>{});
    result.peaks_by_threads = peaksByThreads(metadata);
    result.fill = valueOr<std::string>(metadata, "fill", "");
    result.cache = valueOr<std::string>(metadata, "cache", "hot");
    result.tuning = valueOr<std::string>(metadata, "tuning", "none");
    result.schedule_option = valueOr<std::string>(metadata, "schedule_option", "");
    result.repetitions = valueOr(metadata, "repetitions", 0);
    result.min_time_s = valueOr(metadata, "min_time_s", 0.0);
    result.noisy_iqr = valueOr(metadata, "noisy_iqr", 0.0);
    result.cold_mib = valueOr(metadata, "cold_mib", 0.0);
  } catch (const json::exception& error) {
    throw Error(error.what());
  }
  return result;
}

JsonReport parseJsonReport(const std::string& text, const std::string& display_name) {
  json report;
  try {
    report = json::parse(text);
  } catch (const json::exception& error) {
    throw Error(fmt::format("{}: not JSON ({}); expected a report written by `nkbench run --json`", display_name,
                            error.what()));
  }
  if (!report.is_object() || !report.contains("rows") || !report.at("rows").is_array())
    throw Error(fmt::format("{}: not an nkbench JSON report (no \"rows\" list)", display_name));
  JsonReport result;
  try {
    const json metadata = report.value("metadata", json::object());
    if (!metadata.is_object()) throw Error(fmt::format("not an object but {}", metadata.type_name()));
    result.metadata = metadataFromJson(metadata);
  } catch (const Error& error) {
    throw Error(fmt::format("{}: the metadata is malformed: {}", display_name, error.what()));
  }
  for (const json& row : report.at("rows")) {
    try {
      result.rows.push_back(rowFromJson(row));
    } catch (const Error& error) {
      throw Error(fmt::format("{}: row {} is malformed: {}", display_name, result.rows.size() + 1, error.what()));
    }
  }
  return result;
}

JsonReport readJsonReport(const std::filesystem::path& path) {
  const auto cannotRead = [&path](const std::string& reason) {
    return Error(fmt::format("{}: cannot read the report: {}", path.string(), reason));
  };
  std::error_code status_error;
  if (std::filesystem::is_directory(path, status_error)) throw cannotRead("it is a directory");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw cannotRead(std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw cannotRead(std::strerror(errno));
  return parseJsonReport(text.str(), path.string());
}

}  // namespace nkbench
