// The worker process of isolated runs (isolated_case.h), driven directly: a
// worker that dies while it waits for a case is replaced for the next one, and
// the runner is not killed by writing to its closed pipe.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/run/isolation/isolated_case.h"
#include "harness/run/runner.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench {
namespace {

// The pids of this process's children, from /proc.
std::vector<pid_t> childrenOfThisProcess() {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: the name may hold spaces, the last ')' ends it.
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string state;
    pid_t parent = 0;
    fields >> state >> parent;
    if (parent == ::getpid()) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

SuiteCase smallGemm(const std::string& id) {
  SuiteCase c;
  c.id = id;
  c.problem = test::gemm(24, 16, 8);
  return c;
}

TEST(IsolatedCases, AWorkerKilledWhileWaitingIsReplacedForTheNextCase) {
  const std::unique_ptr<Backend> eigen = test::makeBaseline("eigen", test::hostConfig(Isa::Avx2));
  const std::vector<Backend*> backends = {eigen.get()};
  RunOptions options;
  options.timing.repetitions = 1;
  options.timing.min_time_s = 0.001;
  CaseSettings settings;
  settings.suite = "isolated";
  settings.options = &options;
  IsolatedCases cases(backends, settings, IsolationSettings{60.0});
  const auto noop = [](std::size_t, CaseStage, const ResultRow&) {};

  ASSERT_EQ(cases.run(smallGemm("first"), noop).at(0).status, VerifyStatus::Passed);
  const std::vector<pid_t> workers = childrenOfThisProcess();
  ASSERT_EQ(workers.size(), 1u);
  ASSERT_EQ(::kill(workers[0], SIGKILL), 0);
  // Wait until it is dead, leaving it to the runner to reap: its end of the pipe is closed.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(workers[0]), &info, WEXITED | WNOWAIT), 0);

  const std::vector<ResultRow> rows = cases.run(smallGemm("second"), noop);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, VerifyStatus::Passed) << rows[0].note;
  EXPECT_EQ(rows[0].case_id, "second");
}

}  // namespace
}  // namespace nkbench
