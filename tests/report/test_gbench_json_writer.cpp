#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "harness/report/json/gbench_json_writer.h"
#include "sample_rows.h"

namespace nkbench {
namespace {

using nlohmann::json;

std::vector<json> entriesOf(const json& report, const std::string& run_name, const std::string& run_type) {
  std::vector<json> entries;
  for (const json& entry : report.at("benchmarks"))
    if (entry.at("run_name") == run_name && entry.at("run_type") == run_type) entries.push_back(entry);
  return entries;
}

json aggregateOf(const json& report, const std::string& run_name, const std::string& aggregate) {
  for (const json& entry : entriesOf(report, run_name, "aggregate"))
    if (entry.at("aggregate_name") == aggregate) return entry;
  ADD_FAILURE() << "no " << aggregate << " of " << run_name;
  return json::object();
}

// Two timed rows of the same case, a skipped and a failed one.
std::vector<ResultRow> rows() {
  ResultRow libxsmm = test::passedRow();
  libxsmm.backend = "libxsmm";
  libxsmm.samples_ms = {0.0002, 0.00021, 0.00019, 0.0002};
  libxsmm.samples_iterations = {500000, 490000, 510000, 505000};
  libxsmm.median_ms = 0.0002;
  return {test::passedRow(), test::skippedRow(), test::failedRow(), libxsmm};
}

TEST(GbenchJsonWriter, ContextHasGoogleBenchmarksFields) {
  const json context = toGbenchJson(test::sampleMetadata(), rows()).at("context");
  EXPECT_EQ(context.at("date"), "2024-01-02T03:04:05Z");
  EXPECT_EQ(context.at("host_name"), "host");
  EXPECT_EQ(context.at("executable"), "/opt/nkbench");
  EXPECT_GT(context.at("num_cpus").get<int>(), 0);
  EXPECT_EQ(context.at("mhz_per_cpu"), 3100);
  EXPECT_TRUE(context.at("caches").is_array());
  EXPECT_TRUE(context.at("load_avg").is_array());
  EXPECT_TRUE(context.at("library_build_type") == "release" || context.at("library_build_type") == "debug");
  EXPECT_EQ(context.at("json_schema_version"), 1);  // the only version compare.py accepts
  if (context.contains("cpu_scaling_enabled")) {
    EXPECT_TRUE(context.at("cpu_scaling_enabled").is_boolean());
  }
  EXPECT_EQ(context.at("isa"), "avx512");
  EXPECT_EQ(context.at("shard"), "2/3");
}

TEST(GbenchJsonWriter, OneIterationEntryPerRepetitionOfPassedRowsOnly) {
  const json report = toGbenchJson(test::sampleMetadata(), rows());
  std::set<std::string> run_names;
  for (const json& entry : report.at("benchmarks")) run_names.insert(entry.at("run_name"));
  EXPECT_EQ(run_names, (std::set<std::string>{"brgemm-8x32x16-b2/mlir-nanokernel", "brgemm-8x32x16-b2/libxsmm"}));

  const ResultRow row = test::passedRow();
  const std::vector<json> iterations = entriesOf(report, gbenchName(row), "iteration");
  ASSERT_EQ(iterations.size(), row.samples_ms.size());
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    const json& entry = iterations[i];
    EXPECT_EQ(entry.at("name"), "brgemm-8x32x16-b2/mlir-nanokernel");
    EXPECT_EQ(entry.at("family_index"), 0);
    EXPECT_EQ(entry.at("per_family_instance_index"), 0);
    EXPECT_EQ(entry.at("repetitions"), 3);
    EXPECT_EQ(entry.at("repetition_index"), i);
    EXPECT_EQ(entry.at("threads"), 1);
    EXPECT_EQ(entry.at("iterations"), row.samples_iterations[i]);
    EXPECT_EQ(entry.at("time_unit"), "ns");
    EXPECT_DOUBLE_EQ(entry.at("real_time").get<double>(), row.samples_ms[i] * 1e6);
    EXPECT_EQ(entry.at("cpu_time"), entry.at("real_time"));
    EXPECT_DOUBLE_EQ(entry.at("GFLOPS").get<double>(), row.problem.flops() / (row.samples_ms[i] * 1e6));
    EXPECT_FALSE(entry.contains("aggregate_name"));
  }
  // The next timed row is the next family.
  EXPECT_EQ(entriesOf(report, "brgemm-8x32x16-b2/libxsmm", "iteration").at(0).at("family_index"), 1);
}

TEST(GbenchJsonWriter, TheLabelNamesALevelBelowTheCap) {
  ResultRow below = test::passedRow();
  below.isa = "amx";
  below.isa_used = "avx512-bf16";
  const json at_cap = toGbenchJson(test::sampleMetadata(), {test::passedRow()});
  const json under = toGbenchJson(test::sampleMetadata(), {below});
  const std::string label = entriesOf(under, gbenchName(below), "iteration").at(0).at("label");
  EXPECT_NE(label.find("amx (used avx512-bf16)"), std::string::npos) << label;
  const std::string plain = entriesOf(at_cap, gbenchName(below), "iteration").at(0).at("label");
  EXPECT_EQ(plain.find("used"), std::string::npos) << plain;
}

TEST(GbenchJsonWriter, AggregatesMatchTheRowsStatistics) {
  const json report = toGbenchJson(test::sampleMetadata(), rows());
  for (const ResultRow& row : {rows()[0], rows()[3]}) {
    SCOPED_TRACE(row.backend);
    const json median = aggregateOf(report, gbenchName(row), "median");
    EXPECT_EQ(median.at("name"), gbenchName(row) + "_median");
    EXPECT_EQ(median.at("aggregate_unit"), "time");
    EXPECT_EQ(median.at("iterations"), row.samples_ms.size());  // over repetitions, as Google Benchmark counts
    EXPECT_FALSE(median.contains("repetition_index"));
    EXPECT_NEAR(median.at("real_time").get<double>(), row.median_ms * 1e6, 1e-9);
    EXPECT_EQ(median.at("cpu_time"), median.at("real_time"));
    const double mean = aggregateOf(report, gbenchName(row), "mean").at("real_time").get<double>();
    const double stddev = aggregateOf(report, gbenchName(row), "stddev").at("real_time").get<double>();
    const json cv = aggregateOf(report, gbenchName(row), "cv");
    EXPECT_EQ(cv.at("aggregate_unit"), "percentage");
    EXPECT_NEAR(cv.at("real_time").get<double>(), stddev / mean, 1e-12);
  }
  // rows()[3]: 4 samples whose median interpolates between the middle two.
  EXPECT_NEAR(aggregateOf(report, "brgemm-8x32x16-b2/libxsmm", "mean").at("real_time").get<double>(), 200.0, 1e-9);
}

TEST(GbenchJsonWriter, NamesAreUniquePerRepetitionAndAggregate) {
  const json report = toGbenchJson(test::sampleMetadata(), rows());
  std::set<std::pair<std::string, int>> iterations;
  std::set<std::string> aggregates;
  for (const json& entry : report.at("benchmarks")) {
    const std::string name = entry.at("name");
    const bool unique = entry.at("run_type") == "iteration"
                            ? iterations.insert({name, entry.at("repetition_index").get<int>()}).second
                            : aggregates.insert(name).second;
    EXPECT_TRUE(unique) << entry.dump();
  }
  EXPECT_EQ(iterations.size(), 3u + 4u);
  EXPECT_EQ(aggregates.size(), 2u * 4u);
}

// --threads 1,2 runs each row twice: Google Benchmark's "/threads:N" tells them apart.
TEST(GbenchJsonWriter, ThreadCountsAboveOneAreInTheName) {
  ResultRow one = test::passedRow(), two = test::passedRow();
  two.threads = 2;
  EXPECT_EQ(gbenchName(one), "brgemm-8x32x16-b2/mlir-nanokernel");
  EXPECT_EQ(gbenchName(two), "brgemm-8x32x16-b2/mlir-nanokernel/threads:2");
  const json report = toGbenchJson(test::sampleMetadata(), {one, two});
  std::set<std::string> run_names, aggregates;
  for (const json& entry : report.at("benchmarks")) {
    run_names.insert(entry.at("run_name"));
    if (entry.at("run_type") == "aggregate") {
      EXPECT_TRUE(aggregates.insert(entry.at("name")).second) << entry.dump();
    }
  }
  EXPECT_EQ(run_names, (std::set<std::string>{gbenchName(one), gbenchName(two)}));
  EXPECT_EQ(aggregateOf(report, gbenchName(two), "median").at("name"), gbenchName(two) + "_median");
  EXPECT_EQ(entriesOf(report, gbenchName(two), "iteration").at(0).at("threads"), 2);
}

TEST(GbenchJsonWriter, OneRepetitionHasNoAggregates) {
  ResultRow row = test::passedRow();
  row.samples_ms = {0.0001};
  row.samples_iterations = {1000};
  const json report = toGbenchJson(test::sampleMetadata(), {row});
  ASSERT_EQ(report.at("benchmarks").size(), 1u);
  EXPECT_EQ(report.at("benchmarks")[0].at("run_type"), "iteration");
}

TEST(GbenchJsonWriter, FileIsWrittenWholeAndNothingElse) {
  test::TempDir dir;
  const auto path = dir.path() / "gbench.json";
  writeGbenchJsonFile(path, test::sampleMetadata(), {});
  std::ifstream in(path);
  const json report = json::parse(in);
  EXPECT_TRUE(report.at("benchmarks").empty());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1);
}

}  // namespace
}  // namespace nkbench
