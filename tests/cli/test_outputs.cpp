// The run's report files: what a bad command line, colliding paths, links or
// Google Benchmark's environment may not do to them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_support.h"
#include "tests/support/file_text.h"

namespace {

using namespace cli_test;
using nkbench::test::fileText;

const char* const kOneCase = "  - {id: g16, kind: gemm, shape: [16, 16, 16]}\n";

fs::path writeSuite(const std::string& name) {
  const fs::path suite = tempPath(name + ".yaml");
  std::ofstream(suite) << "suite: " << name << "\ncases:\n" << kOneCase;
  return suite;
}

// An option found bad once the run starts (a backend, a schedule, a report
// path) used to truncate the CSV of the run before.
TEST(Outputs, ABadOptionLeavesTheReportsOfTheRunBeforeAlone) {
  const fs::path suite = writeSuite("keep"), csv = tempPath("keep.csv"), json = tempPath("keep.json");
  const std::string reports = " --out " + csv.string() + " --json " + json.string() + " ";
  ASSERT_EQ(runNkbench("run --suite " + suite.string() + reports + "--backends eigen " + kQuick).exit_code, 0);
  const std::string csv_before = fileText(csv), json_before = fileText(json);
  ASSERT_EQ(readLines(csv).size(), 2u);
  for (const std::string& bad : {std::string("--backends eigen,eigne"), std::string("--backends mlir --schedule bogus"),
                                 "--backends eigen --benchmark-json " + fs::temp_directory_path().string()}) {
    SCOPED_TRACE(bad);
    const Outcome run = runNkbench("run --suite " + suite.string() + reports + bad + " " + kQuick);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_EQ(fileText(csv), csv_before);
    EXPECT_EQ(fileText(json), json_before);
  }
}

TEST(Outputs, ReportsThatNameOneFileAreRefused) {
  const fs::path suite = writeSuite("same"), report = tempPath("same.out");
  const std::string run = "run --suite " + suite.string() + " --backends eigen " + kQuick;
  const Outcome csv_json = runNkbench(run + " --out " + report.string() + " --json " + report.string());
  EXPECT_EQ(csv_json.exit_code, 2);
  EXPECT_NE(csv_json.output.find("--out and --json name the same file, " + report.string()), std::string::npos)
      << csv_json.output;
  const Outcome over_suite = runNkbench(run + " --benchmark-json " + suite.string());
  EXPECT_EQ(over_suite.exit_code, 2);
  EXPECT_NE(over_suite.output.find("--benchmark-json and --suite name the same file"), std::string::npos)
      << over_suite.output;
  EXPECT_NE(fileText(suite).find("g16"), std::string::npos);
}

TEST(Outputs, ABackendNamedTwiceIsRefused) {
  const Outcome run = runNkbench("run --suite " + writeSuite("twice").string() + " --backends eigen,eigen " + kQuick);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("--backends names eigen twice"), std::string::npos) << run.output;
}

// A JSON report given as a link replaces the link's target, not the link.
TEST(Outputs, AReportGivenAsALinkKeepsTheLink) {
  const fs::path target = tempPath("target.json"), link = tempPath("latest.json");
  fs::remove(link);
  std::ofstream(target) << "{}";
  fs::create_symlink(target, link);
  const Outcome run =
      runNkbench("run --suite " + writeSuite("link").string() + " --backends eigen --json " + link.string() + " " + kQuick);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(readReport(target)["rows"].size(), 1u);
}

// Google Benchmark reads its flags' defaults from BENCHMARK_* variables: none
// of them may filter, list, aggregate or write what nkbench times.
TEST(Outputs, GoogleBenchmarksEnvironmentChangesNothing) {
  const fs::path stray = tempPath("stray.json"), json = tempPath("env.json");
  fs::remove(stray);
  const Outcome run = runNkbench(
      "run --suite " + writeSuite("env").string() + " --backends eigen --json " + json.string() + " " + kQuick,
      "BENCHMARK_FILTER=nothing BENCHMARK_LIST_TESTS=true BENCHMARK_REPORT_AGGREGATES_ONLY=true "
      "BENCHMARK_ENABLE_RANDOM_INTERLEAVING=true BENCHMARK_OUT=" + stray.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json row = readReport(json)["rows"].at(0);
  EXPECT_EQ(row["status"], "passed");
  EXPECT_EQ(row["samples_ms"].size(), 2u);  // --reps 2
  EXPECT_FALSE(fs::exists(stray));
}

// The command line a report keeps runs again as it stands, spaces and quotes included.
TEST(Outputs, TheReportsCommandLineRunsAgainInAShell) {
  const fs::path suite = tempPath("it's spaced.yaml"), json = tempPath("command line.json");
  std::ofstream(suite) << "suite: spaced\ncases:\n" << kOneCase;
  const Outcome run = runNkbench("run --suite \"" + suite.string() + "\" --backends eigen --json '" + json.string() +
                                 "' --filter 'g1[6]' " + kQuick);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string command_line = readReport(json)["metadata"]["command_line"];
  EXPECT_NE(command_line.find("'g1[6]'"), std::string::npos) << command_line;
  fs::remove(json);
  ASSERT_EQ(std::system((command_line + " > /dev/null").c_str()), 0) << command_line;
  EXPECT_EQ(readReport(json)["rows"].size(), 1u);
}

}  // namespace
