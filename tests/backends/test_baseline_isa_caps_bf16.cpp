// bf16 under ISA caps below AVX-512 BF16: a library either runs bf16 correctly
// (emulated) or reports why not, never crashes. Each library fixes its ISA once per
// process, so each check runs in a fresh child process (threadsafe death-test style).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/backends/baseline_test_support.h"

namespace nkbench::test {
namespace {

class BaselineBf16IsaCap : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Exits 0 with one "bf16 ..." line per problem on stderr when every problem either
// ran bit-exact or was reported unsupported; exits 1 on a wrong result.
[[noreturn]] void checkBf16UnderCap(const std::string& name, Isa cap) {
  const std::unique_ptr<Backend> backend = makeBaseline(name, hostConfig(cap));
  for (const Problem& problem : {asBf16(brgemm(32, 32, 32, 4, true)),
                                 asBf16(brgemm(7, 33, 5, 1, false)), asBf16(gemm(100, 37, 129)),
                                 asBf16(gemm(203, 157, 91))}) {
    if (const auto reason = backend->unsupportedReason(problem)) {
      std::fprintf(stderr, "bf16 unsupported: %s\n", reason->c_str());
      continue;
    }
    const RunOutcome outcome = runAgainstReference(*backend, problem);
    if (outcome.verification.status != VerifyStatus::Passed) {
      std::fprintf(stderr, "bf16 wrong result [%s]: %s\n", outcome.info.implementation.c_str(),
                   outcome.verification.detail.c_str());
      std::exit(1);
    }
    std::fprintf(stderr, "bf16 ran: %s\n", outcome.info.implementation.c_str());
  }
  std::exit(0);
}

void expectRunsOrReports(const std::string& name, Isa cap) {
  if (!libraryBuiltIn(name)) GTEST_SKIP() << name << " not built in";
  if (!detectCpuFeatures().has(cap)) GTEST_SKIP() << "host lacks " << toString(cap);
  EXPECT_EXIT(checkBf16UnderCap(name, cap), testing::ExitedWithCode(0), "bf16 (ran|unsupported)");
}

TEST_F(BaselineBf16IsaCap, LibxsmmAvx2) { expectRunsOrReports("libxsmm", Isa::Avx2); }
TEST_F(BaselineBf16IsaCap, LibxsmmAvx512) { expectRunsOrReports("libxsmm", Isa::Avx512); }
TEST_F(BaselineBf16IsaCap, OnednnAvx2) { expectRunsOrReports("onednn", Isa::Avx2); }
TEST_F(BaselineBf16IsaCap, OnednnAvx512) { expectRunsOrReports("onednn-packed", Isa::Avx512); }

// Cap semantics: libxsmm 1.17 has no AMX code, so under --isa amx it runs its best
// target below the cap (cpx on an AVX-512 BF16 host) and says so in isa_used,
// rather than skipping. Prints "isa_used=<level>" and exits 0 when the bf16 kernel
// ran bit-exact; exits 1 when it was skipped or wrong.
[[noreturn]] void printLibxsmmLevelUnderAmx() {
  const std::unique_ptr<Backend> backend = makeBaseline("libxsmm", hostConfig(Isa::Amx));
  const Problem problem = asBf16(brgemm(32, 32, 64, 4, false));
  if (const auto reason = backend->unsupportedReason(problem)) {
    std::fprintf(stderr, "skipped: %s\n", reason->c_str());
    std::exit(1);
  }
  const RunOutcome outcome = runAgainstReference(*backend, problem);
  std::fprintf(stderr, "isa_used=%s\n", outcome.info.isa_used.c_str());
  std::exit(outcome.verification.status == VerifyStatus::Passed ? 0 : 1);
}

TEST_F(BaselineBf16IsaCap, LibxsmmRunsItsBestLevelUnderTheAmxCap) {
  if (!libraryBuiltIn("libxsmm")) GTEST_SKIP() << "libxsmm not built in";
  if (!detectCpuFeatures().has(Isa::Avx512Bf16)) GTEST_SKIP() << "host lacks avx512-bf16 (libxsmm's cpx target)";
  EXPECT_EXIT(printLibxsmmLevelUnderAmx(), testing::ExitedWithCode(0), "isa_used=avx512-bf16\n");
}

// f32 kernels report the capped target's level; above avx512 (cpx) that adds only
// bf16 instructions, which f32 code does not use.
[[noreturn]] void printLibxsmmLevelUnder(Isa cap) {
  const std::unique_ptr<Backend> backend = makeBaseline("libxsmm", hostConfig(cap));
  const RunOutcome outcome = runAgainstReference(*backend, brgemm(16, 16, 16, 2, false));
  std::fprintf(stderr, "isa_used=%s\n", outcome.info.isa_used.c_str());
  std::exit(outcome.verification.status == VerifyStatus::Passed ? 0 : 1);
}

TEST_F(BaselineBf16IsaCap, LibxsmmReportsTheCappedLevel) {
  if (!libraryBuiltIn("libxsmm")) GTEST_SKIP() << "libxsmm not built in";
  EXPECT_EXIT(printLibxsmmLevelUnder(Isa::Avx2), testing::ExitedWithCode(0), "isa_used=avx2\n");
  if (!detectCpuFeatures().has(Isa::Avx512)) GTEST_SKIP() << "host lacks avx512";
  EXPECT_EXIT(printLibxsmmLevelUnder(Isa::Avx512), testing::ExitedWithCode(0), "isa_used=avx512\n");
  EXPECT_EXIT(printLibxsmmLevelUnder(Isa::Amx), testing::ExitedWithCode(0), "isa_used=avx512\n");
}

}  // namespace
}  // namespace nkbench::test
