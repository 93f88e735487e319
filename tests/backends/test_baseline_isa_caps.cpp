// ISA caps of the baselines. Each library fixes its ISA once per process, so every
// check runs in a fresh child process (threadsafe death-test style re-executes the
// binary) and reports through its exit code and stderr.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/backends/baseline_test_support.h"

namespace nkbench::test {
namespace {

class BaselineIsaCap : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

[[noreturn]] void exitWith(bool ok, const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(ok ? 0 : 1);
}

// Runs a brgemm on `name` capped to AVX2; for a library whose ISA is fixed per
// process, a second backend with the host's best cap must then report that it cannot follow.
void checkAvx2Cap(const std::string& name, const std::string& forbidden_in_implementation,
                  bool fixed_per_process) {
  const std::unique_ptr<Backend> capped = makeBaseline(name, hostConfig(Isa::Avx2));
  const Problem problem = brgemm(32, 32, 32, 4, true);
  if (const auto reason = capped->unsupportedReason(problem)) exitWith(false, *reason);
  const RunOutcome outcome = runAgainstReference(*capped, problem);
  const std::string& implementation = outcome.info.implementation;
  if (outcome.verification.status != VerifyStatus::Passed)
    exitWith(false, "wrong result: " + outcome.verification.detail);
  if (implementation.find(forbidden_in_implementation) != std::string::npos)
    exitWith(false, "AVX2 cap ignored: " + implementation);

  // A later, higher cap cannot be honoured in this process and must say so.
  if (fixed_per_process && bestHostIsa() != Isa::Avx2) {
    const std::unique_ptr<Backend> uncapped = makeBaseline(name, hostConfig(bestHostIsa()));
    if (!uncapped->unsupportedReason(problem).has_value())
      exitWith(false, "a higher cap after AVX2 was not reported as unsupported");
  }
  exitWith(true, "implementation under the AVX2 cap: " + implementation);
}

TEST_F(BaselineIsaCap, LibxsmmAvx2CapSelectsHaswellTarget) {
  if (!libraryBuiltIn("libxsmm")) GTEST_SKIP() << "libxsmm not built in";
  EXPECT_EXIT(checkAvx2Cap("libxsmm", "(skx)", true), testing::ExitedWithCode(0), "\\(hsw\\)");
}

TEST_F(BaselineIsaCap, OnednnAvx2CapAvoidsAvx512) {
  if (!libraryBuiltIn("onednn")) GTEST_SKIP() << "oneDNN not built in";
  EXPECT_EXIT(checkAvx2Cap("onednn", "avx512", true), testing::ExitedWithCode(0), "implementation");
}

TEST_F(BaselineIsaCap, EigenIgnoresTheCapAndSaysItsCompiledIsa) {
  EXPECT_EXIT(checkAvx2Cap("eigen", "avx512", false), testing::ExitedWithCode(0),
              "compiled ISA: avx2");
}

}  // namespace
}  // namespace nkbench::test
