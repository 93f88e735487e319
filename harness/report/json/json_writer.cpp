#include "harness/report/json/json_writer.h"

#include "harness/report/atomic_file.h"

namespace nkbench {

using nlohmann::json;

namespace {

// {"2": {"fp32": ..., "bf16": ...}, ...}: the peaks of each thread count above one.
json peaksByThreads(const RunMetadata& metadata) {
  json peaks = json::object();
  for (const auto& [threads, peak] : metadata.peaks_by_threads)
    peaks[std::to_string(threads)] = {{"fp32", peak.fp32_gflops}, {"bf16", peak.bf16_gflops}};
  return peaks;
}

}  // namespace

json toJson(const RunMetadata& metadata) {
  json libraries = json::object();
  for (const auto& [library, version] : metadata.library_versions) libraries[library] = version;
  return {
      {"suite", metadata.suite},
      {"selected_cases", metadata.selected_cases},
      {"shard", metadata.shard.empty() ? json(nullptr) : json(metadata.shard)},
      {"cpu_model", metadata.cpu_model},
      {"isa_flags", metadata.isa_flags},
      {"measured_clock_ghz", metadata.measured_clock_ghz},
      {"peak_gflops", metadata.peak_gflops},
      {"bf16_peak_gflops", metadata.bf16_peak_gflops},
      {"bf16_peak_instruction", metadata.bf16_peak_instruction},
      {"isa", metadata.isa},
      {"compiler", metadata.compiler},
      {"library_versions", libraries},
      {"git_commit", metadata.git_commit},
      {"date", metadata.date},
      {"command_line", metadata.command_line},
      {"hostname", metadata.hostname},
      {"threads", metadata.threads},
      {"thread_counts", metadata.thread_counts},
      {"requested_threads", metadata.requested_threads},
      {"case_threads", metadata.case_threads},
      {"cores", metadata.cores},
      {"peaks_by_threads", peaksByThreads(metadata)},
      {"fill", metadata.fill},
      {"cache", metadata.cache},
      {"tuning", metadata.tuning},
      {"schedule_option", metadata.schedule_option},
      {"repetitions", metadata.repetitions},
      {"min_time_s", metadata.min_time_s},
      {"noisy_iqr", metadata.noisy_iqr},
      {"cold_mib", metadata.cold_mib},
  };
}

json toJson(const ResultRow& row) {
  const Problem& problem = row.problem;
  const bool timed = row.timed();
  const auto if_timed = [timed](const json& value) { return timed ? value : json(nullptr); };
  return {
      {"suite", row.suite},
      {"case", row.case_id},
      {"kind", toString(problem.kind)},
      {"dtype", toString(problem.dtype)},
      {"c_dtype", toString(problem.c_dtype)},
      {"m", problem.m},
      {"n", problem.n},
      {"k", problem.k},
      {"batch", problem.batch},
      {"beta", problem.accumulate ? 1 : 0},
      {"layers", problem.kind == OpKind::Mlp ? json(problem.mlp.widthsText()) : json(nullptr)},
      {"epilogue", problem.kind == OpKind::Mlp ? json(problem.mlp.epilogueText()) : json(nullptr)},
      {"isa", row.isa},
      {"isa_used", row.isa_used.empty() ? json(nullptr) : json(row.isa_used)},
      {"backend", row.backend},
      {"threads", row.threads},
      {"register_block", row.register_block},
      {"schedule", row.schedule},
      {"schedule_source", row.schedule_source},
      {"implementation", row.implementation},
      {"nanokernel", row.nanokernel},
      {"repetitions", if_timed(row.repetitions)},
      {"median_gflops", if_timed(row.median_gflops)},
      {"best_gflops", if_timed(row.best_gflops)},
      {"median_ms", if_timed(row.median_ms)},
      {"best_ms", if_timed(row.best_ms)},
      {"stddev_ms", if_timed(row.stddev_ms)},
      {"iqr_ms", if_timed(row.iqr_ms)},
      {"noisy", if_timed(row.noisy)},
      {"samples_ms", if_timed(row.samples_ms)},
      {"samples_iterations", if_timed(row.samples_iterations)},
      {"peak_fraction", if_timed(row.peak_fraction)},
      {"ratio_to_libxsmm",
       timed && row.ratio_to_libxsmm ? json(*row.ratio_to_libxsmm) : json(nullptr)},
      {"compile_ms", row.compile_ms},
      {"kernel_cache", row.kernel_cache},
      {"pack_ms", row.pack_ms},
      {"status", toString(row.status)},
      {"max_error", row.verified() ? json(row.max_error) : json(nullptr)},
      {"note", row.note},
  };
}

json toJson(const RunMetadata& metadata, const std::vector<ResultRow>& rows) {
  json row_list = json::array();
  for (const ResultRow& row : rows) row_list.push_back(toJson(row));
  return {
      {"nkbench_version", kNkbenchVersion},
      {"metadata", toJson(metadata)},
      {"rows", std::move(row_list)},
  };
}

void writeJsonFile(const std::filesystem::path& path, const nlohmann::json& report) {
  // Notes may quote compiler output that is not valid UTF-8: replace, never throw.
  replaceFileAtomically(path, report.dump(2, ' ', false, json::error_handler_t::replace) + "\n", "JSON report");
}

void writeJsonFile(const std::filesystem::path& path, const RunMetadata& metadata,
                   const std::vector<ResultRow>& rows) {
  writeJsonFile(path, toJson(metadata, rows));
}

}  // namespace nkbench
