#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "harness/report/json/json_reader.h"
#include "harness/report/json/json_writer.h"
#include "sample_rows.h"

namespace nkbench {
namespace {

using nlohmann::json;

std::filesystem::path writeText(const test::TempDir& dir, const std::string& text) {
  const auto path = dir.path() / "report.json";
  std::ofstream(path) << text;
  return path;
}

// The message of the Error that reading `path` throws, or "" when it reads.
std::string readError(const std::filesystem::path& path) {
  try {
    readJsonReport(path);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(JsonReader, RoundTripsWhatTheWriterWrites) {
  test::TempDir dir;
  const auto path = dir.path() / "report.json";
  const std::vector<ResultRow> rows = test::sampleRows();
  writeJsonFile(path, test::sampleMetadata(), rows);
  const JsonReport report = readJsonReport(path);
  EXPECT_EQ(toJson(report.metadata, report.rows), toJson(test::sampleMetadata(), rows));
  ASSERT_EQ(report.rows.size(), rows.size());
  EXPECT_EQ(report.rows[0].samples_iterations, rows[0].samples_iterations);
  EXPECT_EQ(report.rows[0].ratio_to_libxsmm, rows[0].ratio_to_libxsmm);
  EXPECT_FALSE(report.rows[3].ratio_to_libxsmm.has_value());
  EXPECT_EQ(report.rows[1].note, rows[1].note);
  EXPECT_EQ(report.rows[0].isa_used, "avx512");
  EXPECT_EQ(report.rows[1].isa_used, "");  // skipped: written as null
  EXPECT_EQ(report.metadata.library_versions, test::sampleMetadata().library_versions);
}

TEST(JsonReader, AnUnshardedRunReadsBackWithoutAShard) {
  RunMetadata metadata = test::sampleMetadata();
  metadata.shard.clear();
  EXPECT_EQ(metadataFromJson(toJson(metadata)).shard, "");
}

TEST(JsonReader, ANonFiniteErrorComesBackAsNan) {
  ResultRow row = test::failedRow();
  row.max_error = std::numeric_limits<double>::infinity();
  const json written = json::parse(toJson(row).dump());  // JSON has no infinity: null
  EXPECT_TRUE(written.at("max_error").is_null());
  EXPECT_TRUE(std::isnan(rowFromJson(written).max_error));
  EXPECT_EQ(rowFromJson(toJson(test::skippedRow())).max_error, 0.0);
}

TEST(JsonReader, OlderReportsTakeDefaults) {
  test::TempDir dir;
  const JsonReport report = readJsonReport(writeText(dir, R"({"rows": [{"case": "a", "kind": "gemm", "dtype": "f32",
      "m": 1, "n": 2, "k": 3, "batch": 1, "beta": 0, "isa": "avx2", "backend": "mlir", "status": "passed",
      "median_ms": 0.5}]})"));
  ASSERT_EQ(report.rows.size(), 1u);
  const ResultRow& row = report.rows[0];
  EXPECT_EQ(row.problem.c_dtype, DType::F32);
  EXPECT_EQ(row.threads, 1);
  EXPECT_DOUBLE_EQ(row.median_ms, 0.5);
  EXPECT_TRUE(row.samples_ms.empty());
  EXPECT_TRUE(row.samples_iterations.empty());
  EXPECT_EQ(row.isa_used, "");  // reports before the column do not say
  EXPECT_EQ(report.metadata.shard, "");
  EXPECT_TRUE(report.metadata.selected_cases.empty());
  // Settings recorded later read as unknown, not as values.
  EXPECT_EQ(report.metadata.schedule_option, "");
  EXPECT_EQ(report.metadata.repetitions, 0);
  EXPECT_EQ(report.metadata.min_time_s, 0.0);
  EXPECT_EQ(report.metadata.cold_mib, 0.0);
}

TEST(JsonReader, TheLevelUsedRoundTripsBelowTheCap) {
  ResultRow row = test::passedRow();
  row.isa = "amx";
  row.isa_used = "avx512-bf16";
  const json written = toJson(row);
  EXPECT_EQ(written.at("isa_used"), "avx512-bf16");
  EXPECT_EQ(rowFromJson(written).isa_used, "avx512-bf16");
  EXPECT_TRUE(toJson(test::skippedRow()).at("isa_used").is_null());
}

TEST(JsonReader, BadReportsNameTheFileAndTheProblem) {
  test::TempDir dir;
  EXPECT_NE(readError(dir.path() / "none.json").find("none.json: cannot read the report: No such file or directory"),
            std::string::npos);
  EXPECT_NE(readError(dir.path()).find("cannot read the report: it is a directory"), std::string::npos);
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"suite,case\n", "not JSON"},
      {"[1, 2]", "no \"rows\" list"},
      {R"({"rows": [{"case": "a"}]})", "row 1 is malformed"},
      {R"({"rows": [{"case": "a", "kind": "conv", "dtype": "f32", "m": 1, "n": 2, "k": 3, "batch": 1, "beta": 0,
          "isa": "avx2", "backend": "mlir", "status": "passed"}]})",
       "unknown kind 'conv'"},
      {R"({"rows": [{"case": "a", "kind": "gemm", "dtype": "f32", "m": 1, "n": 2, "k": 3, "batch": 1, "beta": 0,
          "isa": "avx2", "backend": "mlir", "status": "great"}]})",
       "unknown status 'great'"},
      {R"({"metadata": {"isa": 5}, "rows": []})", "metadata is malformed"},
  };
  for (const auto& c : cases) {
    const auto path = writeText(dir, c.text);
    const std::string message = readError(path);
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

// The message of the Error that parsing a report with `row` as its only row throws.
std::string rowError(const json& row) {
  try {
    parseJsonReport(json{{"rows", {row}}}.dump(), "r.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// One key of a good row set to a bad value, and the message that must name it.
struct BadValue {
  const char* key;
  json value;
  const char* expected;
};

void expectMalformed(const json& good, const std::vector<BadValue>& cases) {
  for (const BadValue& c : cases) {
    json row = good;
    row[c.key] = c.value;
    EXPECT_EQ(rowError(row), std::string("r.json: row 1 is malformed: ") + c.expected) << c.key;
  }
}

// Found by fuzz_report: nlohmann's get<T>() converted what it found, so a bad
// value was read as another one (2.5 samples as 2, beta 2 as 0, true as 1 ms)
// or, out of range, was undefined behaviour.
TEST(JsonReader, ValuesOfTheWrongTypeOrRangeAreMalformed) {
  const json good = toJson(test::passedRow());
  ASSERT_EQ(rowError(good), "");
  const std::vector<BadValue> cases = {
      {"samples_iterations", {3437, 0.019}, "'samples_iterations' must be an integer, got 0.019"},
      {"m", 1e300, "'m' must be an integer, got 1e+300"},
      {"m", "64", "'m' must be an integer, got string"},
      {"n", 18446744073709551615u, "'n' is 18446744073709551615, out of range"},
      {"threads", 4294967296, "'threads' is 4294967296, out of range"},
      {"threads", 0, "'threads' must be 1 or more, got 0"},
      {"threads", -3, "'threads' must be 1 or more, got -3"},
      {"beta", 2, "'beta' must be 0 or 1, got 2"},
      {"median_ms", true, "'median_ms' must be a number, got boolean"},
      {"noisy", 1, "'noisy' must be true or false, got 1"},
      {"samples_ms", {0.1, false}, "'samples_ms' must be a number, got boolean"},
      {"case", 7, "'case' must be a string, got 7"},
  };
  expectMalformed(good, cases);
}

TEST(JsonReader, AnMlpRowReadsBackIntoTheSameProblem) {
  test::TempDir dir;
  const auto path = dir.path() / "report.json";
  std::vector<ResultRow> rows = {test::mlpRow(), test::passedRow(), test::mlpRow()};
  rows[2].problem.dtype = DType::BF16;
  rows[2].problem.c_dtype = DType::BF16;
  rows[2].problem.mlp = {{1024, 1024, 1024, 1024}, false, Activation::None};
  rows[2].problem.m = 256;
  rows[2].problem.k = 1024;
  rows[2].problem.n = 1024;
  writeJsonFile(path, test::sampleMetadata(), rows);
  const JsonReport report = readJsonReport(path);
  ASSERT_EQ(report.rows.size(), 3u);
  EXPECT_EQ(toJson(report.metadata, report.rows), toJson(test::sampleMetadata(), rows));
  for (std::size_t i : {0u, 2u}) {
    const Problem& read = report.rows[i].problem;
    const Problem& written = rows[i].problem;
    EXPECT_EQ(read.kind, OpKind::Mlp);
    EXPECT_EQ(read.dtype, written.dtype);
    EXPECT_EQ(read.c_dtype, written.c_dtype);
    EXPECT_EQ(read.m, written.m);
    EXPECT_EQ(read.n, written.n);
    EXPECT_EQ(read.k, written.k);
    EXPECT_EQ(read.batch, 1);
    EXPECT_FALSE(read.accumulate);
    EXPECT_EQ(read.mlp, written.mlp);
    EXPECT_EQ(read.describe(), written.describe());
    EXPECT_EQ(read.flops(), written.flops());
  }
  EXPECT_EQ(report.rows[0].problem.mlp.widths, (std::vector<std::int64_t>{64, 96, 32}));
  EXPECT_TRUE(report.rows[0].problem.mlp.bias);
  EXPECT_EQ(report.rows[0].problem.mlp.activation, Activation::Relu);
  EXPECT_TRUE(report.rows[1].problem.mlp.widths.empty());  // a brgemm has no layers
}

TEST(JsonReader, AnMlpRowNeedsItsLayers) {
  const json good = toJson(test::mlpRow());
  ASSERT_EQ(rowError(good), "");
  const std::vector<BadValue> cases = {
      {"layers", "64", "'layers' '64': expected two or more widths such as 1024-1024"},
      {"layers", "64-0-32", "'layers' '64-0-32': expected two or more widths such as 1024-1024"},
      {"layers", 64, "'layers' must be a string, got 64"},
      {"epilogue", "gelu", "'epilogue' 'gelu': expected bias+relu, bias, relu or nothing"},
      {"epilogue", "relu+bias", "'epilogue' 'relu+bias': expected bias+relu, bias, relu or nothing"},
  };
  expectMalformed(good, cases);
  json without_layers = good;
  without_layers.erase("layers");
  EXPECT_NE(rowError(without_layers).find("r.json: row 1 is malformed"), std::string::npos);
  EXPECT_NE(rowError(without_layers).find("layers"), std::string::npos) << rowError(without_layers);
  json null_layers = good;
  null_layers["layers"] = nullptr;
  EXPECT_NE(rowError(null_layers).find("'layers' must be a string"), std::string::npos) << rowError(null_layers);
  // No epilogue key (or null) reads as none.
  json without_epilogue = good;
  without_epilogue.erase("epilogue");
  const ResultRow plain = rowFromJson(without_epilogue);
  EXPECT_FALSE(plain.problem.mlp.bias);
  EXPECT_EQ(plain.problem.mlp.activation, Activation::None);
  // Other kinds ignore the keys.
  json brgemm = toJson(test::passedRow());
  brgemm["layers"] = "not-widths";
  EXPECT_EQ(rowError(brgemm), "");
}

TEST(JsonReader, TheCacheModeIsReadBack) {
  RunMetadata metadata = test::sampleMetadata();
  metadata.cache = "cold";
  EXPECT_EQ(metadataFromJson(toJson(metadata)).cache, "cold");
  EXPECT_EQ(metadataFromJson(json::object()).cache, "hot");  // reports from before cold-cache runs
}

// merge needs what each shard was asked for to tell which rows a case owes.
TEST(JsonReader, TheRequestedThreadCountsAreReadBack) {
  RunMetadata metadata = test::sampleMetadata();
  metadata.requested_threads = {1, 2};
  metadata.case_threads = {{"big", 4}};
  const RunMetadata read = metadataFromJson(toJson(metadata));
  EXPECT_EQ(read.requested_threads, (std::vector<int>{1, 2}));
  EXPECT_EQ(read.case_threads, (std::map<std::string, int>{{"big", 4}}));
  EXPECT_TRUE(metadataFromJson(json::object()).requested_threads.empty());  // older reports
  EXPECT_THROW(metadataFromJson(json{{"case_threads", {{"big", "four"}}}}), Error);
}

TEST(JsonReader, MetadataThatIsNotAnObjectIsMalformed) {
  try {
    parseJsonReport(R"({"metadata": 5, "rows": []})", "r.json");
    FAIL() << "read";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "r.json: the metadata is malformed: not an object but number");
  }
}

TEST(JsonReader, AReportWithoutRowsIsValid) {
  test::TempDir dir;
  const auto path = dir.path() / "empty.json";
  writeJsonFile(path, test::sampleMetadata(), {});
  const JsonReport report = readJsonReport(path);
  EXPECT_TRUE(report.rows.empty());
  EXPECT_EQ(report.metadata.shard, "2/3");
}

}  // namespace
}  // namespace nkbench
