#include <gtest/gtest.h>

#include <fstream>

#include "harness/core/error.h"
#include "harness/report/csv_writer.h"
#include "harness/report/json/json_writer.h"
#include "sample_rows.h"

namespace nkbench {
namespace {

using nlohmann::json;

json readJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);  // throws on malformed JSON
}

TEST(JsonWriter, HasVersionMetadataAndRows) {
  const json report = toJson(test::sampleMetadata(), test::sampleRows());
  EXPECT_EQ(report.at("nkbench_version"), std::string(kNkbenchVersion));
  const json& metadata = report.at("metadata");
  EXPECT_EQ(metadata.at("cpu_model"), "Test CPU @ 3.0GHz");
  EXPECT_EQ(metadata.at("isa_flags"), json({"avx2", "fma", "avx512f"}));
  EXPECT_DOUBLE_EQ(metadata.at("measured_clock_ghz").get<double>(), 3.1);
  EXPECT_DOUBLE_EQ(metadata.at("peak_gflops").get<double>(), 198.4);
  EXPECT_EQ(metadata.at("library_versions").at("onednn"), "2.6.3");
  EXPECT_EQ(metadata.at("threads"), 1);
  EXPECT_EQ(metadata.at("suite"), "smoke");
  EXPECT_EQ(metadata.at("selected_cases"), json({"brgemm-8x32x16-b2", "gemm-40x50x30"}));
  EXPECT_EQ(metadata.at("shard"), "2/3");
  for (const char* key :
       {"isa", "compiler", "git_commit", "date", "command_line", "hostname", "fill"}) {
    EXPECT_TRUE(metadata.at(key).is_string()) << key;
  }
  EXPECT_EQ(report.at("rows").size(), 4u);
}

TEST(JsonWriter, AnUnshardedRunHasANullShard) {
  RunMetadata metadata = test::sampleMetadata();
  metadata.shard.clear();
  EXPECT_TRUE(toJson(metadata).at("shard").is_null());
}

TEST(JsonWriter, RowKeysAreTheCsvColumnsAndTheSamples) {
  const json row = toJson(test::passedRow());
  std::vector<std::string> keys;
  for (const auto& [key, value] : row.items()) keys.push_back(key);
  std::vector<std::string> columns(csvColumns().begin(), csvColumns().end());
  columns.push_back("samples_ms");
  columns.push_back("samples_iterations");
  std::sort(keys.begin(), keys.end());
  std::sort(columns.begin(), columns.end());
  EXPECT_EQ(keys, columns);
}

TEST(JsonWriter, AnMlpRowHasItsLayersAndEpilogue) {
  const json mlp = toJson(test::mlpRow());
  EXPECT_EQ(mlp.at("kind"), "mlp");
  EXPECT_EQ(mlp.at("layers"), "64-96-32");
  EXPECT_EQ(mlp.at("epilogue"), "bias+relu");
  EXPECT_EQ(mlp.at("m"), 16);
  EXPECT_EQ(mlp.at("n"), 32);
  EXPECT_EQ(mlp.at("k"), 64);
  ResultRow plain = test::mlpRow();
  plain.problem.mlp.bias = false;
  plain.problem.mlp.activation = Activation::None;
  EXPECT_EQ(toJson(plain).at("epilogue"), "");  // an mlp without one: empty, not null
  // Other kinds: null, as for an empty CSV field.
  const json brgemm = toJson(test::passedRow());
  EXPECT_TRUE(brgemm.at("layers").is_null());
  EXPECT_TRUE(brgemm.at("epilogue").is_null());
}

TEST(JsonWriter, NumbersAreNumbers) {
  const json row = toJson(test::passedRow());
  EXPECT_EQ(row.at("m"), 8);
  EXPECT_EQ(row.at("batch"), 2);
  EXPECT_EQ(row.at("beta"), 1);
  EXPECT_EQ(row.at("repetitions"), 15);
  EXPECT_DOUBLE_EQ(row.at("median_gflops").get<double>(), 123.456);
  EXPECT_DOUBLE_EQ(row.at("ratio_to_libxsmm").get<double>(), 1.04567);
  EXPECT_DOUBLE_EQ(row.at("compile_ms").get<double>(), 812.3456);
  EXPECT_EQ(row.at("status"), "passed");
  EXPECT_EQ(row.at("kind"), "brgemm");
  EXPECT_EQ(row.at("case"), "brgemm-8x32x16-b2");
  EXPECT_EQ(row.at("noisy"), false);
  EXPECT_EQ(row.at("samples_ms").get<std::vector<double>>(), test::passedRow().samples_ms);
  EXPECT_EQ(row.at("samples_iterations").get<std::vector<std::int64_t>>(), test::passedRow().samples_iterations);
}

TEST(JsonWriter, AbsentValuesAreNull) {
  ResultRow no_ratio = test::passedRow();
  no_ratio.ratio_to_libxsmm.reset();
  EXPECT_TRUE(toJson(no_ratio).at("ratio_to_libxsmm").is_null());

  const json skipped = toJson(test::skippedRow());
  EXPECT_TRUE(skipped.at("median_gflops").is_null());
  EXPECT_TRUE(skipped.at("max_error").is_null());
  EXPECT_TRUE(skipped.at("samples_ms").is_null());
  EXPECT_TRUE(skipped.at("samples_iterations").is_null());
  EXPECT_TRUE(skipped.at("noisy").is_null());
  EXPECT_EQ(skipped.at("status"), "skipped");
  EXPECT_EQ(skipped.at("note"), test::skippedRow().note);
}

TEST(JsonWriter, FileRoundTrips) {
  test::TempDir dir;
  const auto path = dir.path() / "report.json";
  const auto rows = test::sampleRows();
  writeJsonFile(path, test::sampleMetadata(), {rows.begin(), rows.begin() + 1});
  EXPECT_EQ(readJson(path).at("rows").size(), 1u);
  // Rewriting replaces the whole file and leaves no temporary behind.
  writeJsonFile(path, test::sampleMetadata(), rows);
  const json report = readJson(path);
  EXPECT_EQ(report, toJson(test::sampleMetadata(), rows));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(JsonWriter, InvalidUtf8InNotesIsReplaced) {
  test::TempDir dir;
  ResultRow row = test::skippedRow();
  row.note = "bad byte \xff here";
  writeJsonFile(dir.path() / "report.json", test::sampleMetadata(), {row});
  EXPECT_EQ(readJson(dir.path() / "report.json").at("rows").at(0).at("status"), "skipped");
}

TEST(JsonWriter, UnwritablePathThrows) {
  test::TempDir dir;
  EXPECT_THROW(writeJsonFile(dir.path() / "missing" / "report.json", test::sampleMetadata(), {}), Error);
}

}  // namespace
}  // namespace nkbench
