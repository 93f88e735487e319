#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "harness/compare/regression_check.h"
#include "harness/compare/stored_run.h"
#include "harness/core/error.h"
#include "harness/report/json/json_reader.h"
#include "harness/report/json/json_writer.h"

namespace nkbench {
namespace {

namespace fs = std::filesystem;

fs::path tempFile(const std::string& name, const std::string& content) {
  const fs::path dir = fs::temp_directory_path() / ("nkbench-compare-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << content;
  return dir / name;
}

void expectLoadError(const fs::path& path, const std::string& part) {
  try {
    loadStoredRun(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(part), std::string::npos) << message << " lacks " << part;
  }
}

ResultRow writtenRow(const std::string& backend) {
  ResultRow row;
  row.suite = std::string("s");
  row.case_id = std::string("bf16-c");
  row.problem.dtype = DType::BF16;
  row.problem.c_dtype = DType::BF16;
  row.problem.m = 8;
  row.problem.n = 32;
  row.problem.k = 16;
  row.problem.batch = 2;
  row.isa = std::string("avx512-bf16");
  row.backend = backend;
  row.status = VerifyStatus::Passed;
  row.repetitions = 3;
  row.median_ms = 0.002;
  row.samples_ms = {0.0021, 0.002, 0.0019};
  return row;
}

TEST(StoredRun, ReadsWhatTheJsonWriterWrites) {
  const fs::path path = tempFile("run.json", "");
  RunMetadata metadata;
  metadata.cpu_model = "Test CPU";
  metadata.git_commit = "abc123";
  ResultRow skipped = writtenRow("onednn");
  skipped.status = VerifyStatus::Skipped;
  skipped.note = std::string("no bf16 here");
  writeJsonFile(path, metadata, {writtenRow("mlir"), skipped});
  const StoredRun run = loadStoredRun(path);
  ASSERT_EQ(run.rows.size(), 2u);
  const StoredRow& mlir = run.rows[0];
  EXPECT_EQ(mlir.key(), "bf16-c mlir bf16->bf16 avx512-bf16");
  EXPECT_EQ(mlir.problem, "brgemm 8x32x16 b2 beta=0");
  EXPECT_TRUE(mlir.passed());
  EXPECT_EQ(mlir.median_ms, 0.002);
  EXPECT_EQ(mlir.samples_ms, (std::vector<double>{0.0021, 0.002, 0.0019}));
  EXPECT_EQ(run.rows[1].status, "skipped");
  EXPECT_FALSE(run.rows[1].median_ms.has_value());
  EXPECT_TRUE(run.rows[1].samples_ms.empty());
  EXPECT_NE(run.origin.find("Test CPU"), std::string::npos);
  EXPECT_NE(run.origin.find("abc123"), std::string::npos);
}

// A run at several thread counts has a row per count: the count is part of the key.
TEST(StoredRun, RowsOfMoreThreadsAreKeyedApart) {
  const fs::path path = tempFile("threads.json", "");
  ResultRow two = writtenRow("mlir");
  two.threads = 2;
  writeJsonFile(path, RunMetadata{}, {writtenRow("mlir"), two});
  const StoredRun run = loadStoredRun(path);
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].key(), "bf16-c mlir bf16->bf16 avx512-bf16");
  EXPECT_EQ(run.rows[1].key(), "bf16-c mlir bf16->bf16 avx512-bf16 2 threads");
}

TEST(StoredRun, OlderReportsWithoutCDtypeOrSamplesLoad) {
  const fs::path path = tempFile("old.json", R"({"rows": [{"case": "a", "kind": "gemm", "dtype": "f32", "m": 1,
      "n": 2, "k": 3, "batch": 1, "beta": 0, "isa": "avx2", "backend": "mlir", "status": "passed",
      "median_ms": 0.5, "note": ""}]})");
  const StoredRun run = loadStoredRun(path);
  EXPECT_EQ(run.rows.at(0).key(), "a mlir f32 avx2");
  EXPECT_TRUE(run.rows.at(0).samples_ms.empty());
  EXPECT_EQ(run.rows.at(0).isa_used, "");
  EXPECT_NE(run.origin.find("unknown"), std::string::npos);
}

// An mlp row: 16 rows through widths 64, 96, 32 with bias and ReLU.
ResultRow mlpRow(const std::string& backend) {
  ResultRow row = writtenRow(backend);
  row.case_id = "mlp";
  row.problem = Problem{OpKind::Mlp, DType::F32, DType::F32, 16, 32, 64, 1, false, {{64, 96, 32}, true, Activation::Relu}};
  row.isa = "avx2";
  return row;
}

TEST(StoredRun, AnMlpRowIsKnownByItsLayersAndEpilogue) {
  const fs::path path = tempFile("mlp.json", "");
  writeJsonFile(path, RunMetadata{}, {mlpRow("eigen")});
  const StoredRun run = loadStoredRun(path);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].key(), "mlp eigen f32 avx2");
  EXPECT_EQ(run.rows[0].problem, "mlp f32 16x[64-96-32] bias+relu");
  EXPECT_TRUE(run.rows[0].passed());
}

// The same case id with other layers, or another epilogue, is another problem: not compared.
TEST(StoredRun, AnMlpWhoseLayersChangedIsNotCompared) {
  const fs::path base_path = tempFile("mlp-base.json", "");
  writeJsonFile(base_path, RunMetadata{}, {mlpRow("eigen")});
  const StoredRun base = loadStoredRun(base_path);
  for (int change = 0; change < 3; ++change) {
    ResultRow row = mlpRow("eigen");
    if (change == 0) row.problem.mlp.widths = {64, 128, 32};
    if (change == 1) row.problem.mlp.activation = Activation::None;
    if (change == 2) row.problem.m = 32;
    const fs::path path = tempFile("mlp-current.json", "");
    writeJsonFile(path, RunMetadata{}, {row});
    const StoredRun current = loadStoredRun(path);
    EXPECT_NE(current.rows.at(0).problem, base.rows.at(0).problem) << change;
    const Comparison comparison = compareRuns(base, current, {});
    ASSERT_EQ(comparison.rows.size(), 1u);
    EXPECT_EQ(comparison.rows[0].verdict, Verdict::NotCompared) << change;
    EXPECT_NE(comparison.rows[0].note.find("the case changed"), std::string::npos) << comparison.rows[0].note;
  }
  // Unchanged, it is compared.
  EXPECT_NE(compareRuns(base, base, {}).rows.at(0).verdict, Verdict::NotCompared);
}

TEST(StoredRun, BadReportsNameTheFile) {
  expectLoadError(fs::temp_directory_path() / "nkbench-no-such-report.json", "cannot read");
  expectLoadError(tempFile("text.json", "suite,case\n"), "not JSON");
  expectLoadError(tempFile("list.json", "[1, 2]"), "not an nkbench JSON report");
  expectLoadError(tempFile("empty.json", R"({"rows": []})"), "no rows");
  expectLoadError(tempFile("malformed.json", R"({"rows": [{"case": "a"}]})"), "row 1 is malformed");
  const std::string row = R"({"case": "a", "kind": "gemm", "dtype": "f32", "m": 1, "n": 2, "k": 3, "batch": 1,
      "beta": 0, "isa": "avx2", "backend": "mlir", "status": "skipped"})";
  expectLoadError(tempFile("twice.json", R"({"rows": [)" + row + "," + row + "]}"), "appears twice");
}

// A passed row without a usable time compared as unchanged (or infinitely fast).
TEST(StoredRun, APassedRowWithoutAPositiveTimeIsRefusedByName) {
  const std::string head = R"({"rows": [{"case": "a", "kind": "gemm", "dtype": "f32", "m": 1, "n": 2, "k": 3,
      "batch": 1, "beta": 0, "isa": "avx2", "backend": "libxsmm", "status": "skipped"},
      {"case": "a", "kind": "gemm", "dtype": "f32", "m": 1, "n": 2, "k": 3, "batch": 1, "beta": 0, "isa": "avx2",
       "backend": "mlir", "status": "passed", )";
  const std::string culprit = "row 2 ('a mlir f32 avx2') passed but its ";
  expectLoadError(tempFile("null.json", head + R"("median_ms": null, "samples_ms": []}]})"),
                  culprit + "median_ms is missing, null or 0");
  expectLoadError(tempFile("none.json", head + R"("note": ""}]})"), culprit + "median_ms is missing, null or 0");
  expectLoadError(tempFile("negative.json", head + R"("median_ms": -0.5}]})"), culprit + "median_ms is -0.5");
  expectLoadError(tempFile("sample.json", head + R"("median_ms": 0.5, "samples_ms": [0.5, -1, 0.5]}]})"),
                  culprit + "samples_ms[1] is -1");
  expectLoadError(tempFile("zero.json", head + R"("median_ms": 0.5, "samples_ms": [0.5, 0]}]})"),
                  culprit + "samples_ms[1] is 0");
  // JSON has no infinity, a report read otherwise might.
  JsonReport report = readJsonReport(tempFile("fine.json", head + R"("median_ms": 0.5, "samples_ms": [0.5]}]})"));
  report.rows[1].median_ms = std::numeric_limits<double>::infinity();
  try {
    storedRunOf(report, "inf.json");
    ADD_FAILURE() << "no error for an infinite median";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("inf.json: " + culprit + "median_ms is inf"), std::string::npos)
        << error.what();
  }
  // A row that did not pass needs no time.
  EXPECT_NO_THROW(loadStoredRun(tempFile("fine.json", head + R"("median_ms": 0.5, "samples_ms": [0.5, 0.4]}]})")));
}

}  // namespace
}  // namespace nkbench
