#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/report/console_table.h"
#include "sample_rows.h"

namespace nkbench {
namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ConsoleTable, OneTablePerSuiteInOrderOfAppearance) {
  const std::string table = formatTable(test::sampleRows());
  const auto smoke = table.find("suite: smoke");
  const auto other = table.find("suite: default");
  ASSERT_NE(smoke, std::string::npos) << table;
  ASSERT_NE(other, std::string::npos) << table;
  EXPECT_LT(smoke, other);
}

TEST(ConsoleTable, ShowsMeasurementsAndStatus) {
  const std::string table = formatTable({test::passedRow()});
  for (const char* text : {"case", "backend", "used", "median GFLOPS", "x libxsmm", "compile ms", "pack ms",
                           "brgemm-8x32x16-b2", "mlir-nanokernel", "8x32", "123.46", "130.00",
                           "61.2", "1.05", "812.3", "0.012", "passed"}) {
    EXPECT_NE(table.find(text), std::string::npos) << text << "\n" << table;
  }
  EXPECT_EQ(table.find("note:"), std::string::npos) << table;
}

TEST(ConsoleTable, ColumnsLineUp) {
  const std::string table = formatTable({test::passedRow(), test::failedRow()});
  const auto lines = linesOf(table);
  // Title, header, rule, then rows: "status" starts at the same column on every row.
  ASSERT_GE(lines.size(), 5u) << table;
  const auto status_column = lines[1].find("status");
  EXPECT_EQ(lines[3].find("passed"), status_column) << table;
  EXPECT_EQ(lines[4].find("failed"), status_column) << table;
}

TEST(ConsoleTable, NotesOfRowsThatDidNotPassFollowOnOneLine) {
  const std::string table = formatTable({test::skippedRow()});
  const auto lines = linesOf(table);
  ASSERT_EQ(lines.size(), 5u) << table;
  EXPECT_NE(lines[3].find("skipped"), std::string::npos) << table;
  EXPECT_EQ(lines[4].rfind("    note: not built: \"dnnl\" missing, see cmake second line", 0), 0u)
      << table;
}

TEST(ConsoleTable, LongNotesAreShortened) {
  ResultRow row = test::skippedRow();
  row.note = std::string(500, 'x');
  const auto lines = linesOf(formatTable({row}));
  EXPECT_LT(lines.back().size(), 130u);
  EXPECT_EQ(lines.back().substr(lines.back().size() - 3), "...");
}

TEST(ConsoleTable, EmptyInputGivesEmptyText) { EXPECT_EQ(formatTable({}), ""); }

TEST(ConsoleTable, RowCountsTellPassedFailedSkippedMistrustedAndErrors) {
  ResultRow mistrusted = test::failedRow();
  mistrusted.status = VerifyStatus::Mistrusted;
  EXPECT_EQ(formatRowCounts({test::passedRow(), test::skippedRow(), test::failedRow(), mistrusted}),
            "4 rows: 1 passed, 1 failed, 1 skipped, 1 mistrusted");
  EXPECT_EQ(formatRowCounts({}), "0 rows: 0 passed, 0 failed, 0 skipped");
  ResultRow crashed = test::failedRow();
  crashed.status = VerifyStatus::Error;
  EXPECT_EQ(formatRowCounts({test::passedRow(), crashed, test::failedRow()}),
            "3 rows: 1 passed, 1 failed, 0 skipped, 1 error");
  EXPECT_EQ(formatRowCounts({mistrusted, mistrusted, crashed, crashed}),
            "4 rows: 0 passed, 0 failed, 0 skipped, 2 mistrusted, 2 errors");
}

}  // namespace
}  // namespace nkbench
