// The kernel cache as a user meets it: a rerun links what the first run
// compiled, says so in each row, and computes the same; off compiles every time.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/cli/cli_test_support.h"

namespace {

using namespace cli_test;

const std::string kCases =
    "  - {id: block, kind: brgemm, shape: [13, 40, 24], batch: 3}\n"
    "  - {id: gemm, kind: gemm, shape: [100, 37, 129]}\n"
    "  - {id: bf16, kind: brgemm, dtype: bf16, c_dtype: bf16, shape: [7, 36, 5], batch: 2, beta: 1}\n";

TEST(KernelCacheCli, ARerunHitsAndComputesTheSame) {
  const fs::path dir = tempPath("kernels");
  fs::remove_all(dir);
  const std::string options = "--backends mlir --kernel-cache " + dir.string();
  const SuiteRun first = runCases("cache-first", kCases, options);
  ASSERT_EQ(first.outcome.exit_code, 0) << first.outcome.output;
  const SuiteRun second = runCases("cache-second", kCases, options);
  ASSERT_EQ(second.outcome.exit_code, 0) << second.outcome.output;
  const nlohmann::json before = readReport(first.json).at("rows");
  const nlohmann::json after = readReport(second.json).at("rows");
  ASSERT_EQ(before.size(), 3u);
  ASSERT_EQ(after.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(before[i].at("kernel_cache"), "miss") << before[i].dump();
    EXPECT_EQ(after[i].at("kernel_cache"), "hit") << after[i].dump();
    EXPECT_EQ(after[i].at("status"), "passed");
    EXPECT_EQ(after[i].at("max_error"), before[i].at("max_error"));
    EXPECT_EQ(after[i].at("nanokernel"), before[i].at("nanokernel"));
    EXPECT_EQ(after[i].at("register_block"), before[i].at("register_block"));
    EXPECT_LT(after[i].at("compile_ms").get<double>(), before[i].at("compile_ms").get<double>());
  }
}

TEST(KernelCacheCli, OffCompilesEveryTimeAndLibrariesSayNothing) {
  const SuiteRun run = runCases("cache-off", kCases, "--backends mlir,libxsmm --kernel-cache off");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  const nlohmann::json off_report = readReport(run.json);
  for (const auto& row : off_report.at("rows"))
    EXPECT_EQ(row.at("kernel_cache"), row.at("backend") == "mlir" ? "off" : "") << row.dump();
}

TEST(KernelCacheCli, ADamagedEntryIsReportedOnceAndRebuilt) {
  const fs::path dir = tempPath("damaged-kernels");
  fs::remove_all(dir);
  const std::string options = "--backends mlir --kernel-cache " + dir.string();
  ASSERT_EQ(runCases("damage-first", kCases, options).outcome.exit_code, 0);
  for (const auto& file : fs::directory_iterator(dir)) {
    std::fstream entry(file.path(), std::ios::in | std::ios::out | std::ios::binary);
    entry.seekp(200);
    entry.put('\x5a');
  }
  const SuiteRun rerun = runCases("damage-second", kCases, options);
  ASSERT_EQ(rerun.outcome.exit_code, 0) << rerun.outcome.output;
  const nlohmann::json rerun_report = readReport(rerun.json);
  for (const auto& row : rerun_report.at("rows")) {
    EXPECT_EQ(row.at("kernel_cache"), "miss") << row.dump();
    EXPECT_EQ(row.at("status"), "passed");
  }
  EXPECT_NE(rerun.outcome.output.find("is damaged"), std::string::npos) << rerun.outcome.output;
  const SuiteRun third = runCases("damage-third", kCases, options);
  const nlohmann::json third_report = readReport(third.json);
  for (const auto& row : third_report.at("rows")) EXPECT_EQ(row.at("kernel_cache"), "hit") << row.dump();
}

}  // namespace
