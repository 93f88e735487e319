#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "harness/report/csv_writer.h"
#include "sample_rows.h"

namespace nkbench {
namespace {

using Record = std::vector<std::string>;

// A strict RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<Record> parseCsv(const std::string& text) {
  std::vector<Record> records;
  Record record;
  std::string field;
  bool in_quotes = false;
  bool field_was_quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      EXPECT_TRUE(field.empty() && !field_was_quoted) << "quote inside an unquoted field";
      in_quotes = true;
      field_was_quoted = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
      field_was_quoted = false;
    } else if (c == '\n') {
      record.push_back(field);
      records.push_back(record);
      record.clear();
      field.clear();
      field_was_quoted = false;
    } else {
      EXPECT_FALSE(field_was_quoted) << "text after a closing quote";
      field += c;
    }
  }
  EXPECT_FALSE(in_quotes) << "unterminated quoted field";
  EXPECT_TRUE(record.empty() && field.empty()) << "last record lacks its line end";
  return records;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string field(const Record& record, std::string_view column) {
  const auto columns = csvColumns();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == column) return record.at(i);
  }
  ADD_FAILURE() << "no column " << column;
  return "";
}

TEST(CsvWriter, HeaderHasTheDocumentedColumnsInOrder) {
  const Record expected = {
      "suite", "case", "kind", "dtype", "c_dtype", "m", "n", "k", "batch", "beta", "layers", "epilogue",
      "isa", "isa_used", "backend", "threads",
      "register_block", "schedule", "schedule_source", "implementation", "nanokernel",
      "repetitions", "median_gflops", "best_gflops", "median_ms", "best_ms", "stddev_ms",
      "iqr_ms", "noisy", "peak_fraction", "ratio_to_libxsmm",
      "compile_ms", "kernel_cache", "pack_ms",
      "status", "max_error", "note"};
  test::TempDir dir;
  CsvWriter writer(dir.path() / "out.csv");
  const auto records = parseCsv(readFile(dir.path() / "out.csv"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0], expected);
  EXPECT_EQ(Record(csvColumns().begin(), csvColumns().end()), expected);
}

TEST(CsvWriter, EveryRowIsOnDiskRightAfterWrite) {
  test::TempDir dir;
  const auto path = dir.path() / "out.csv";
  CsvWriter writer(path);
  const auto rows = test::sampleRows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    writer.write(rows[i]);
    // Read back while the writer is still open: flushed rows are all there.
    const auto records = parseCsv(readFile(path));
    ASSERT_EQ(records.size(), i + 2);
    for (const Record& record : records) EXPECT_EQ(record.size(), csvColumns().size());
  }
}

TEST(CsvWriter, QuotesCommasQuotesAndNewlines) {
  const ResultRow row = test::skippedRow();
  const auto records = parseCsv(csvRecord(row) + "\n");
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].size(), csvColumns().size());
  EXPECT_EQ(field(records[0], "note"), row.note);
  EXPECT_NE(csvRecord(row).find("\"\"dnnl\"\""), std::string::npos);
}

TEST(CsvWriter, FormatsNumbers) {
  const auto record = parseCsv(csvRecord(test::passedRow()) + "\n").at(0);
  EXPECT_EQ(field(record, "suite"), "smoke");
  EXPECT_EQ(field(record, "case"), "brgemm-8x32x16-b2");
  EXPECT_EQ(field(record, "kind"), "brgemm");
  EXPECT_EQ(field(record, "dtype"), "f32");
  EXPECT_EQ(field(record, "c_dtype"), "f32");
  EXPECT_EQ(field(record, "m"), "8");
  EXPECT_EQ(field(record, "n"), "32");
  EXPECT_EQ(field(record, "k"), "16");
  EXPECT_EQ(field(record, "batch"), "2");
  EXPECT_EQ(field(record, "beta"), "1");
  EXPECT_EQ(field(record, "threads"), "1");
  EXPECT_EQ(field(record, "repetitions"), "15");
  EXPECT_EQ(field(record, "median_gflops"), "123.46");
  EXPECT_EQ(field(record, "best_gflops"), "130.00");
  EXPECT_EQ(field(record, "median_ms"), "0.0001325");
  EXPECT_EQ(field(record, "best_ms"), "0.00012");
  EXPECT_EQ(field(record, "stddev_ms"), "1.5e-06");
  EXPECT_EQ(field(record, "iqr_ms"), "2.5e-06");
  EXPECT_EQ(field(record, "noisy"), "0");
  EXPECT_EQ(field(record, "peak_fraction"), "0.612");
  EXPECT_EQ(field(record, "ratio_to_libxsmm"), "1.046");
  EXPECT_EQ(field(record, "compile_ms"), "812.3");
  EXPECT_EQ(field(record, "pack_ms"), "0.01234");
  EXPECT_EQ(field(record, "status"), "passed");
  EXPECT_EQ(field(record, "max_error"), "0");
  EXPECT_EQ(field(record, "note"), "");
}

TEST(CsvWriter, WritesTheLevelUsedBesideTheCap) {
  ResultRow row = test::passedRow();
  row.isa = "amx";
  row.isa_used = "avx512-bf16";
  const auto record = parseCsv(csvRecord(row) + "\n").at(0);
  EXPECT_EQ(field(record, "isa"), "amx");
  EXPECT_EQ(field(record, "isa_used"), "avx512-bf16");
}

TEST(CsvWriter, LeavesMeasurementsNotTakenEmpty) {
  const auto skipped = parseCsv(csvRecord(test::skippedRow()) + "\n").at(0);
  for (std::string_view column :
       {"repetitions", "median_gflops", "best_gflops", "median_ms", "best_ms", "stddev_ms", "iqr_ms", "noisy",
        "peak_fraction", "ratio_to_libxsmm", "max_error"}) {
    EXPECT_EQ(field(skipped, column), "") << column;
  }
  EXPECT_EQ(field(skipped, "status"), "skipped");
  EXPECT_EQ(field(skipped, "isa_used"), "");  // never prepared

  const auto failed = parseCsv(csvRecord(test::failedRow()) + "\n").at(0);
  EXPECT_EQ(field(failed, "median_gflops"), "");
  EXPECT_EQ(field(failed, "ratio_to_libxsmm"), "");
  EXPECT_EQ(field(failed, "max_error"), "0.00314");
  EXPECT_EQ(field(failed, "status"), "failed");
}

TEST(CsvWriter, AnMlpRowWritesItsLayersAndEpilogue) {
  const auto record = parseCsv(csvRecord(test::mlpRow()) + "\n").at(0);
  ASSERT_EQ(record.size(), csvColumns().size());
  EXPECT_EQ(field(record, "kind"), "mlp");
  EXPECT_EQ(field(record, "m"), "16");  // the rows
  EXPECT_EQ(field(record, "n"), "32");  // the last width
  EXPECT_EQ(field(record, "k"), "64");  // the first width
  EXPECT_EQ(field(record, "batch"), "1");
  EXPECT_EQ(field(record, "beta"), "0");
  EXPECT_EQ(field(record, "layers"), "64-96-32");
  EXPECT_EQ(field(record, "epilogue"), "bias+relu");
  EXPECT_EQ(field(record, "isa"), "avx512");  // the column after them
  const struct {
    bool bias;
    Activation activation;
    const char* epilogue;
  } epilogues[] = {{true, Activation::None, "bias"}, {false, Activation::Relu, "relu"}, {false, Activation::None, ""}};
  for (const auto& e : epilogues) {
    ResultRow row = test::mlpRow();
    row.problem.mlp.bias = e.bias;
    row.problem.mlp.activation = e.activation;
    EXPECT_EQ(field(parseCsv(csvRecord(row) + "\n").at(0), "epilogue"), e.epilogue);
  }
}

TEST(CsvWriter, OtherKindsLeaveLayersAndEpilogueEmpty) {
  for (const ResultRow& row : test::sampleRows()) {
    const auto record = parseCsv(csvRecord(row) + "\n").at(0);
    EXPECT_EQ(field(record, "layers"), "") << row.case_id;
    EXPECT_EQ(field(record, "epilogue"), "") << row.case_id;
  }
}

TEST(CsvWriter, UnwritablePathThrows) {
  test::TempDir dir;
  EXPECT_THROW(CsvWriter(dir.path() / "no-such-folder" / "out.csv"), Error);
}

}  // namespace
}  // namespace nkbench
