// A kernel that crashes, hangs or faults costs its own row and nothing else:
// each case runs in a child process (run --isolate, the default). The faulty
// test backend goes wrong on purpose (kernels/faulty/faulty_backend.h).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fcntl.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/cli_test_support.h"

extern char** environ;

namespace {

using namespace cli_test;

// Three quick cases; the faulty backend goes wrong on the first only (8x32x32).
constexpr const char* kCases =
    "  - {id: first, kind: brgemm, shape: [8, 32, 32], batch: 4}\n"
    "  - {id: second, kind: brgemm, shape: [16, 16, 16], batch: 2, dtype: bf16}\n"
    "  - {id: third, kind: gemm, shape: [64, 48, 32]}\n";

SuiteRun runFaulty(const std::string& name, const std::string& fault, const std::string& options = "") {
  const fs::path suite = tempPath(name + ".yaml");
  std::ofstream(suite) << "suite: " << name << "\ncases:\n" << kCases;
  const fs::path json = tempPath(name + ".json");
  return {runNkbench("run --suite " + suite.string() + " --backends eigen,faulty " + options + " " + kQuick +
                      " --json " + json.string(),
                  "NKBENCH_FAULTY=" + fault + ":8x32x32"),
          json};
}

// The faulty row of the first case errored with `note`; the five others passed.
void expectOnlyItsOwnRow(const SuiteRun& run, const std::string& note) {
  EXPECT_EQ(run.outcome.exit_code, 1) << run.outcome.output;
  const nlohmann::json report = readReport(run.json);
  ASSERT_EQ(report.at("rows").size(), 6u) << run.outcome.output;
  for (const nlohmann::json& row : report.at("rows")) {
    const bool culprit = row.at("case") == "first" && row.at("backend") == "faulty";
    EXPECT_EQ(row.at("status"), culprit ? "error" : "passed") << row.dump();
    if (culprit) {
      EXPECT_EQ(row.at("note").get<std::string>().find(note), 0u) << row.dump();
      EXPECT_TRUE(row.at("median_gflops").is_null());  // an error never reports a speed
    } else {
      EXPECT_GT(row.at("median_gflops").get<double>(), 0.0) << row.dump();
    }
  }
  EXPECT_NE(run.outcome.output.find("6 rows: 5 passed, 0 failed, 0 skipped, 1 error"), std::string::npos)
      << run.outcome.output;
}

TEST(Isolation, ACrashWhileVerifyingCostsItsOwnRow) {
  expectOnlyItsOwnRow(runFaulty("segv", "segv@verify"), "killed by SIGSEGV (Segmentation fault) while verifying; a write to 0x10");
}

TEST(Isolation, AnIllegalInstructionWhileCompilingCostsItsOwnRow) {
  expectOnlyItsOwnRow(runFaulty("ill", "ill@compile"), "killed by SIGILL (Illegal instruction) while compiling");
}

// The verification passed; the crash comes among the timed calls, and the case's
// other backends are timed again without it.
TEST(Isolation, ACrashWhileTimingCostsItsOwnRow) {
  expectOnlyItsOwnRow(runFaulty("fpe", "fpe@time"), "killed by SIGFPE (Floating point exception) while timing");
  expectOnlyItsOwnRow(runFaulty("abort", "abort@time"), "killed by SIGABRT (Aborted) while timing");
  expectOnlyItsOwnRow(runFaulty("bus", "bus@verify"), "killed by SIGBUS (Bus error) while verifying");
}

// The first case's C (8x32 f32) ends one vector before its guard page: a byte
// written past its end lands in the canary slack. A read a page past B's end
// is in B's guard. Both name the operand.
TEST(Isolation, AnOutOfBoundsWriteCostsItsOwnRowAndNamesTheOperand) {
  expectOnlyItsOwnRow(runFaulty("oob-write", "oob-write@verify"), "out of bounds: a write 1 byte past the end of C");
}

TEST(Isolation, AnOutOfBoundsReadCostsItsOwnRowAndNamesTheOperand) {
  expectOnlyItsOwnRow(runFaulty("oob-read", "oob-read@time"),
                      "killed by SIGSEGV (Segmentation fault) while timing; "
                      "out of bounds: a read 4097 bytes past the end of B");
}

// A 7x5 f32 C is 140 bytes: the byte past its end is canary slack, not a guard
// page. The write goes unfaulted, and the canary check makes it an error row,
// isolated or not.
TEST(Isolation, AnOutOfBoundsWriteIntoTheSlackIsCaughtByTheCanary) {
  const std::string cases =
      "  - {id: slack, kind: brgemm, shape: [7, 5, 3], batch: 2}\n"
      "  - {id: whole, kind: brgemm, shape: [8, 32, 32], batch: 4}\n";
  for (const char* mode : {"--isolate", "--no-isolate"}) {
    const fs::path suite = tempPath(std::string("canary") + mode + ".yaml");
    std::ofstream(suite) << "suite: canary\ncases:\n" << cases;
    const fs::path json = tempPath(std::string("canary") + mode + ".json");
    const Outcome run = runNkbench("run --suite " + suite.string() + " --backends eigen,faulty " + mode + " " +
                                       kQuick + " --json " + json.string(),
                                   "NKBENCH_FAULTY=oob-write@verify:7x5x3");
    EXPECT_EQ(run.exit_code, 1) << run.output;
    const nlohmann::json report = readReport(json);
    ASSERT_EQ(report.at("rows").size(), 4u) << run.output;
    for (const nlohmann::json& row : report.at("rows")) {
      const bool culprit = row.at("case") == "slack" && row.at("backend") == "faulty";
      EXPECT_EQ(row.at("status"), culprit ? "error" : "passed") << mode << ": " << row.dump();
      if (culprit) {
        EXPECT_EQ(row.at("note"), "out of bounds: a write 1 byte past the end of C") << mode;
        EXPECT_TRUE(row.at("median_gflops").is_null());
      }
    }
  }
}

TEST(Isolation, AHangIsStoppedAtTheCaseTimeout) {
  const auto start = std::chrono::steady_clock::now();
  expectOnlyItsOwnRow(runFaulty("hang", "hang@time", "--case-timeout 2"),
                      "timed out after 2 s (--case-timeout) while timing");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST(Isolation, WithoutAFaultEveryRowPassesInProcessToo) {
  for (const char* mode : {"--isolate", "--no-isolate"}) {
    const SuiteRun run = runCases(std::string("clean") + (mode[2] == 'n' ? "-in-process" : ""), kCases,
                                  std::string("--backends eigen,faulty ") + mode);
    ASSERT_EQ(run.outcome.exit_code, 0) << run.outcome.output;
    const nlohmann::json report = readReport(run.json);
    ASSERT_EQ(report.at("rows").size(), 6u);
    for (const nlohmann::json& row : report.at("rows")) EXPECT_EQ(row.at("status"), "passed") << row.dump();
  }
}

// In process nothing can stop a hung case: a limit given there is refused, not ignored.
TEST(Isolation, ACaseTimeoutWithoutIsolationIsRefused) {
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --no-isolate --case-timeout 2 " +
                                 kQuick);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("--case-timeout needs --isolate"), std::string::npos) << run.output;
}

TEST(Isolation, ABadFaultPlanIsOneLine) {
  const Outcome run = runNkbench("run --suite " + sourcePath("suites/smoke.yaml") + " --backends faulty " + kQuick,
                              "NKBENCH_FAULTY=melt@verify");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("NKBENCH_FAULTY 'melt@verify': unknown kind melt"), std::string::npos) << run.output;
}

// SIGINT after the first case: the run stops after the case in progress, the
// JSON report is valid and holds the cases that completed, and the exit status
// says interrupted.
// nkbench started in the background with `arguments` (stdout to /dev/null) and
// this process's environment plus `variable`, if given; its pid, or -1.
pid_t spawnNkbench(std::vector<std::string> arguments, const std::string& variable = "") {
  arguments.insert(arguments.begin(), NKBENCH_BINARY);
  std::vector<char*> argv;
  for (std::string& word : arguments) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment;
  if (!variable.empty()) environment.push_back(variable);
  for (char** entry = environ; *entry; ++entry) environment.emplace_back(*entry);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawn(&pid, NKBENCH_BINARY, &actions, nullptr, argv.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

TEST(Isolation, AnInterruptStopsAfterTheCurrentCaseWithValidReports) {
  const fs::path suite = tempPath("interrupt.yaml");
  std::ofstream(suite) << "suite: interrupt\ncases:\n"
                       << "  - {id: one, kind: gemm, shape: [256, 256, 256]}\n"
                       << "  - {id: two, kind: gemm, shape: [256, 256, 256]}\n"
                       << "  - {id: three, kind: gemm, shape: [256, 256, 256]}\n"
                       << "  - {id: four, kind: gemm, shape: [256, 256, 256]}\n";
  const fs::path json = tempPath("interrupt.json");
  fs::remove(json);
  const pid_t pid = spawnNkbench({"run", "--suite", suite.string(), "--backends", "eigen", "--reps", "5",
                                   "--min-time", "0.3", "--quiet", "--json", json.string()});
  ASSERT_GT(pid, 0);
  // The report is rewritten whole after each case: wait for the first row.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::size_t rows_before = 0;
  while (std::chrono::steady_clock::now() < give_up) {
    try {
      rows_before = readReport(json).at("rows").size();
    } catch (const std::exception&) {
      rows_before = 0;
    }
    if (rows_before > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(rows_before, 0u) << "no case completed";
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const nlohmann::json report = readReport(json);
  EXPECT_GE(report.at("rows").size(), rows_before);
  EXPECT_LT(report.at("rows").size(), 4u);
  for (const nlohmann::json& row : report.at("rows")) EXPECT_EQ(row.at("status"), "passed") << row.dump();
}

// The worker's state letter (R, S, Z...) from /proc, or 0 once it is gone.
char processState(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, name;
  char state = 0;
  if (!(status >> pid_text >> name >> state)) return 0;
  return state;
}

// A runner killed outright (SIGKILL, no chance to clean up) takes its worker,
// here hung in a kernel, along.
TEST(Isolation, AWorkerEndsWhenItsRunnerIsKilledOutright) {
  const fs::path suite = tempPath("orphan.yaml");
  std::ofstream(suite) << "suite: orphan\ncases:\n" << kCases;
  pid_t runner = spawnNkbench({"run", "--suite", suite.string(), "--backends", "faulty", "--case-timeout", "120",
                               "--quiet"},
                              "NKBENCH_FAULTY=hang@time:8x32x32");
  pid_t worker = 0;
  ASSERT_GT(runner, 0);
  struct KillAtExit {  // whatever the test's outcome, nothing is left spinning
    pid_t& runner;
    pid_t& worker;
    ~KillAtExit() {
      if (worker > 0) ::kill(worker, SIGKILL);
      if (runner > 0 && ::kill(runner, SIGKILL) == 0) ::waitpid(runner, nullptr, 0);
    }
  } kill_at_exit{runner, worker};
  // Its worker: the runner's child that is nkbench (not a shell asking git for
  // the commit), then given time to reach the hung kernel.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(100);
  while (std::chrono::steady_clock::now() < give_up && worker == 0) {
    std::ifstream children("/proc/" + std::to_string(runner) + "/task/" + std::to_string(runner) + "/children");
    for (pid_t child = 0; worker == 0 && children >> child;) {
      std::ifstream name_file("/proc/" + std::to_string(child) + "/comm");
      std::string name;
      if (name_file >> name && name == "nkbench") worker = child;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(worker, 0) << "no worker started";
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ASSERT_NE(processState(worker), 0);
  ASSERT_NE(processState(worker), 'Z');
  ::kill(runner, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(runner, &status, 0), runner);
  runner = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline && processState(worker) != 0 && processState(worker) != 'Z')
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const char state = processState(worker);
  EXPECT_TRUE(state == 0 || state == 'Z') << "worker " << worker << " still in state " << state;
}

}  // namespace
