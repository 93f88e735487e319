// Multi-threaded runs: --threads as a count or a list, one thread per core,
// GEMMs sharing out their C blocks, BRGEMMs their rows (or skipped with the
// reason where too few), peaks of
// the cores used, and the refusal of more threads than cores.
#include <gtest/gtest.h>
#include <sched.h>

#include <set>

#include "tests/cli/cli_test_support.h"

namespace {

using namespace cli_test;

int usableCoreCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

constexpr const char* kCases =
    "  - {id: gemm, kind: gemm, shape: [96, 80, 64]}\n"
    "  - {id: block, kind: brgemm, shape: [16, 32, 16], batch: 2}\n"
    "  - {id: short, kind: brgemm, shape: [8, 32, 16], batch: 2}\n";

TEST(Threads, EachCaseRunsAtEachCountAndGemmsShareTheirBlocks) {
  if (usableCoreCount() < 2) GTEST_SKIP() << "one core";
  const SuiteRun run = runCases("threads-list", kCases, "--backends mlir,libxsmm,onednn --threads 1,2");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  EXPECT_NE(run.outcome.output.find("gemm (2 threads)"), std::string::npos) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  const nlohmann::json& metadata = report.at("metadata");
  EXPECT_EQ(metadata.at("threads"), 2);
  EXPECT_EQ(metadata.at("thread_counts"), nlohmann::json::array({1, 2}));
  ASSERT_EQ(metadata.at("cores").size(), 2u);
  EXPECT_NE(metadata.at("cores")[0], metadata.at("cores")[1]);
  // Two cores' peak, each measured at once: more than one core's.
  EXPECT_GT(metadata.at("peaks_by_threads").at("2").at("fp32").get<double>(), metadata.at("peak_gflops").get<double>());
  std::set<std::pair<std::string, int>> seen;
  for (const nlohmann::json& row : report.at("rows")) {
    const int threads = row.at("threads");
    seen.insert({row.at("case").get<std::string>(), threads});
    const bool parallel_brgemm = row.at("kind") == "brgemm" && threads == 2 && row.at("backend") != "onednn";
    const std::string note = row.at("note").is_string() ? row.at("note").get<std::string>() : "";
    if (parallel_brgemm && row.at("case") == "short") {
      EXPECT_EQ(row.at("status"), "skipped") << row.dump();
      EXPECT_NE(note.find("its 8 rows make one"), std::string::npos) << row.dump();
    } else if (parallel_brgemm) {
      EXPECT_EQ(row.at("status"), "passed") << row.dump();
      EXPECT_EQ(note, "A, C -> 2 row panels of 8 rows, shared out among 2 threads") << row.dump();
    } else {
      EXPECT_EQ(row.at("status"), "passed") << row.dump();
    }
  }
  EXPECT_EQ(seen.size(), 6u);
}

TEST(Threads, ACaseMaySetItsOwnCount) {
  if (usableCoreCount() < 2) GTEST_SKIP() << "one core";
  const SuiteRun run = runCases("threads-own", "  - {id: gemm, kind: gemm, shape: [64, 64, 64], threads: 2}\n",
                                "--backends mlir");
  ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  ASSERT_EQ(report.at("rows").size(), 1u);
  EXPECT_EQ(report.at("rows")[0].at("threads"), 2);
  EXPECT_EQ(report.at("rows")[0].at("status"), "passed");
}

// Each thread count has a worker process of its own; a worker forked later
// must not hold an earlier one's request pipe open, or that one never sees the
// end of its requests and the run waits for it forever after the last case.
TEST(Threads, AnyOrderOfCountsEndsTheRun) {
  if (usableCoreCount() < 2) GTEST_SKIP() << "one core";
  const fs::path suite = tempPath("threads-order.yaml");
  std::ofstream(suite) << "suite: threads-order\ncases:\n" << kCases;
  const fs::path json = tempPath("threads-order.json");
  const Outcome run = runNkbenchWithin(120, "run --suite " + suite.string() + " --backends eigen --threads 2,1 " +
                                                kQuick + " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("6 rows: 4 passed, 0 failed, 2 skipped"), std::string::npos) << run.output;
  EXPECT_EQ(readReport(json).at("rows").size(), 6u);
}

TEST(Threads, MoreThreadsThanCoresAreRefusedInOneLine) {
  const int too_many = usableCoreCount() + 1;
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --threads " +
                                 std::to_string(too_many) + " " + kQuick);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--threads " + std::to_string(too_many) + ": this process may use"), std::string::npos)
      << run.output;
  for (const char* bad : {"0", "1,1", "two", "1,", "2000"}) {
    const Outcome refused = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --threads " + bad + " " +
                                       kQuick);
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.output;
    EXPECT_NE(refused.output.find("--threads"), std::string::npos) << refused.output;
  }
}

// A case's own count beyond the cores names the case and its line, and every
// shard of the suite refuses it alike.
TEST(Threads, ACaseAskingForMoreThreadsThanCoresIsNamed) {
  const int too_many = usableCoreCount() + 1;
  const fs::path suite = tempPath("threads-case.yaml");
  std::ofstream(suite) << "suite: threads-case\ncases:\n  - {id: small, kind: gemm, shape: [8, 8, 8]}\n"
                       << "  - {id: wide, kind: gemm, shape: [8, 8, 8], threads: " << too_many << "}\n";
  for (const char* shard : {"1/2", "2/2"}) {
    const Outcome run = runNkbench("run --suite " + suite.string() + " --shard " + shard + " --backends eigen " + kQuick);
    EXPECT_EQ(run.exit_code, 2) << shard << ": " << run.output;
    EXPECT_NE(run.output.find(suite.string() + ":4: case 'wide' asks for threads: " + std::to_string(too_many)),
              std::string::npos)
        << run.output;
  }
  // `list` refuses what `run` refuses, before printing anything.
  const Outcome list = runNkbench("list --suite " + suite.string() + " --backends eigen");
  EXPECT_EQ(list.exit_code, 2) << list.output;
  EXPECT_EQ(list.output.rfind("nkbench: error: " + suite.string() + ":4: case 'wide' asks for threads: ", 0), 0u)
      << list.output;
  const Outcome counts = runNkbench("list --backends eigen --threads " + std::to_string(too_many));
  EXPECT_EQ(counts.exit_code, 2) << counts.output;
  EXPECT_EQ(counts.output.rfind("nkbench: error: --threads " + std::to_string(too_many) + ": this process may use", 0),
            0u)
      << counts.output;
}

// `list` says what `run` would do at each thread count a case runs at.
TEST(Threads, ListSaysWhatRunsAtEachCount) {
  if (usableCoreCount() < 2) GTEST_SKIP() << "one core";
  const fs::path suite = tempPath("threads-list.yaml");
  std::ofstream(suite) << "suite: threads-list\ncases:\n  - {id: own, kind: brgemm, shape: [16, 32, 16], batch: 2, "
                          "threads: 2}\n  - {id: gemm, kind: gemm, shape: [96, 80, 64]}\n";
  const Outcome list = runNkbench("list --suite " + suite.string() + " --backends eigen --threads 1,2");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("eigen (2T)         skip: eigen: a BRGEMM is a loop of small products"),
            std::string::npos)
      << list.output;
  EXPECT_EQ(list.output.find("eigen (1T)         skip"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("eigen (1T)         run"), std::string::npos) << list.output;  // the GEMM
  // A case of its own single count is tagged too where the run has several.
  const fs::path own_one = tempPath("threads-list-own-one.yaml");
  std::ofstream(own_one) << "suite: own-one\ncases:\n  - {id: one, kind: gemm, shape: [32, 32, 32], threads: 1}\n";
  const Outcome tagged = runNkbench("list --suite " + own_one.string() + " --backends eigen --threads 1,2");
  ASSERT_EQ(tagged.exit_code, 0) << tagged.output;
  EXPECT_NE(tagged.output.find("eigen (1T)         run"), std::string::npos) << tagged.output;
  const Outcome none = runNkbench("list --suite " + suite.string() + " --filter zzz");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.output.find("--filter 'zzz' matches no case"), std::string::npos) << none.output;
  const Outcome no_suite = runNkbench("list --filter gemm");
  EXPECT_EQ(no_suite.exit_code, 2);
  EXPECT_NE(no_suite.output.find("--filter selects cases of a suite: give --suite"), std::string::npos)
      << no_suite.output;
}

}  // namespace
