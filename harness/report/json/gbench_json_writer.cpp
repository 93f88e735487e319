#include "harness/report/json/gbench_json_writer.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "harness/core/statistics.h"
#include "harness/report/atomic_file.h"
#include "harness/report/json/json_writer.h"

namespace nkbench {
namespace {

using nlohmann::json;

constexpr double kNanosecondsPerMs = 1e6;

// What Google Benchmark puts in "context", with the host facts nkbench itself
// measured where it has them (date, host name, clock), and the run's own
// description as custom context (strings, as AddCustomContext adds them).
json contextJson(const RunMetadata& metadata) {
  const benchmark::CPUInfo& cpu = benchmark::CPUInfo::Get();
  json caches = json::array();
  for (const auto& cache : cpu.caches)
    caches.push_back(
        {{"type", cache.type}, {"level", cache.level}, {"size", cache.size}, {"num_sharing", cache.num_sharing}});
  json context = {
      {"date", metadata.date},
      {"host_name", metadata.hostname},
      // argv[0], as main() recorded it first in the command line.
      {"executable", metadata.command_line.substr(0, metadata.command_line.find(' '))},
      {"num_cpus", cpu.num_cpus},
      {"mhz_per_cpu", std::lround(metadata.measured_clock_ghz * 1000.0)},
      {"caches", std::move(caches)},
      {"load_avg", cpu.load_avg},
#ifdef NDEBUG
      {"library_build_type", "release"},
#else
      {"library_build_type", "debug"},
#endif
      {"json_schema_version", 1},
      {"nkbench_version", kNkbenchVersion},
      {"suite", metadata.suite},
      {"isa", metadata.isa},
      {"cpu_model", metadata.cpu_model},
      {"git_commit", metadata.git_commit},
      {"fill", metadata.fill},
  };
  if (cpu.scaling != benchmark::CPUInfo::UNKNOWN)
    context["cpu_scaling_enabled"] = cpu.scaling == benchmark::CPUInfo::ENABLED;
  if (!metadata.shard.empty()) context["shard"] = metadata.shard;
  return context;
}

// "brgemm ..., amx", and the level used when the backend ran below the cap.
std::string gbenchLabel(const ResultRow& row) {
  std::string label = fmt::format("{}, {}", row.problem.describe(), row.isa);
  if (!row.isa_used.empty() && row.isa_used != row.isa) label += fmt::format(" (used {})", row.isa_used);
  return label;
}

// The keys every entry of one row shares.
json entryJson(const ResultRow& row, int family_index) {
  return {
      {"name", gbenchName(row)},
      {"family_index", family_index},
      {"per_family_instance_index", 0},
      {"run_name", gbenchName(row)},
      {"repetitions", row.samples_ms.size()},
      {"threads", row.threads},
      {"time_unit", "ns"},
      {"label", gbenchLabel(row)},
  };
}

struct Aggregate {
  const char* name;
  const char* unit;  // "time", or "percentage" (a fraction, as Google Benchmark writes cv)
  std::function<double(const std::vector<double>&)> compute;
};

const std::vector<Aggregate>& aggregates() {
  static const std::vector<Aggregate> list = {
      {"mean", "time", [](const std::vector<double>& v) { return mean(v); }},
      {"median", "time", [](const std::vector<double>& v) { return median(v); }},
      {"stddev", "time", [](const std::vector<double>& v) { return sampleStddev(v); }},
      {"cv", "percentage", [](const std::vector<double>& v) { return sampleStddev(v) / mean(v); }},
  };
  return list;
}

void appendRowEntries(const ResultRow& row, int family_index, json& benchmarks) {
  std::vector<double> nanoseconds, gflops;
  for (double ms : row.samples_ms) {
    nanoseconds.push_back(ms * kNanosecondsPerMs);
    gflops.push_back(row.problem.flops() / nanoseconds.back());
  }
  for (std::size_t i = 0; i < nanoseconds.size(); ++i) {
    json entry = entryJson(row, family_index);
    entry["run_type"] = "iteration";
    entry["repetition_index"] = i;
    entry["iterations"] = row.samples_iterations.at(i);
    entry["real_time"] = entry["cpu_time"] = nanoseconds[i];
    entry["GFLOPS"] = gflops[i];
    benchmarks.push_back(std::move(entry));
  }
  // Google Benchmark reports no aggregate of a single repetition.
  if (nanoseconds.size() < 2) return;
  for (const Aggregate& aggregate : aggregates()) {
    json entry = entryJson(row, family_index);
    entry["name"] = gbenchName(row) + "_" + aggregate.name;
    entry["run_type"] = "aggregate";
    entry["aggregate_name"] = aggregate.name;
    entry["aggregate_unit"] = aggregate.unit;
    entry["iterations"] = nanoseconds.size();  // an aggregate is over repetitions, not calls
    entry["real_time"] = entry["cpu_time"] = aggregate.compute(nanoseconds);
    entry["GFLOPS"] = aggregate.compute(gflops);
    benchmarks.push_back(std::move(entry));
  }
}

}  // namespace

std::string gbenchName(const ResultRow& row) {
  const std::string name = row.case_id + "/" + row.backend;
  return row.threads > 1 ? fmt::format("{}/threads:{}", name, row.threads) : name;
}

json toGbenchJson(const RunMetadata& metadata, const std::vector<ResultRow>& rows) {
  json benchmarks = json::array();
  int family_index = 0;
  for (const ResultRow& row : rows)
    if (row.timed()) appendRowEntries(row, family_index++, benchmarks);
  return {{"context", contextJson(metadata)}, {"benchmarks", std::move(benchmarks)}};
}

void writeGbenchJsonFile(const std::filesystem::path& path, const RunMetadata& metadata,
                         const std::vector<ResultRow>& rows) {
  replaceFileAtomically(path, toGbenchJson(metadata, rows).dump(2, ' ', false, json::error_handler_t::replace) + "\n",
                        "Google Benchmark JSON report");
}

}  // namespace nkbench
