// Every baseline backend against the reference: bit for bit under exact-integer data.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/host/omp_threads.h"
#include "harness/host/pinning.h"

#include <ostream>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench::test {
namespace {

std::vector<BaselineCase> allCases() {
  std::vector<Problem> problems;
  // Remainders in every dimension, batch 1, and a 1x1x1 degenerate case.
  for (bool accumulate : {false, true}) {
    problems.push_back(brgemm(7, 33, 5, 1, accumulate));
    problems.push_back(brgemm(8, 32, 32, 4, accumulate));
    problems.push_back(brgemm(32, 32, 32, 8, accumulate));
    problems.push_back(brgemm(1, 1, 1, 1, accumulate));
    problems.push_back(brgemm(17, 3, 65, 3, accumulate));
  }
  problems.push_back(gemm(7, 33, 5));
  problems.push_back(gemm(64, 64, 64));
  problems.push_back(gemm(100, 37, 129));
  problems.push_back(gemm(256, 128, 96));
  problems.push_back(gemm(203, 157, 91));  // edge blocks in M and N, each a kernel of its own

  std::vector<BaselineCase> cases;
  for (const std::string& backend : kBaselines)
    for (const Problem& problem : problems) cases.push_back({backend, problem});
  return cases;
}

class BaselineMatchesReference : public testing::TestWithParam<BaselineCase> {};

TEST_P(BaselineMatchesReference, BitForBit) {
  const BaselineCase& param = GetParam();
  const std::unique_ptr<Backend> backend = makeBaseline(param.backend, hostConfig(bestHostIsa()));
  ASSERT_NE(backend, nullptr);
  if (const auto reason = backend->unsupportedReason(param.problem)) {
    if (libraryBuiltIn(param.backend)) FAIL() << "unexpectedly unsupported: " << *reason;
    GTEST_SKIP() << *reason;
  }
  const RunOutcome outcome = runAgainstReference(*backend, param.problem);
  const Verification& verification = outcome.verification;
  // "Mistrusted" (a mostly-zero reference, as 1x1x1 with beta 1 can give) still
  // proves the result here: beta-0 runs start from NaN and beta-1 ones from a
  // nonzero C, so a kernel that wrote nothing would mismatch.
  EXPECT_EQ(verification.mismatches, 0) << verification.detail;
  EXPECT_TRUE(verification.status == VerifyStatus::Passed ||
              verification.status == VerifyStatus::Mistrusted)
      << toString(verification.status) << ": " << verification.detail << " ["
      << outcome.info.implementation << "]";
  EXPECT_FALSE(outcome.info.implementation.empty());
}

INSTANTIATE_TEST_SUITE_P(Baselines, BaselineMatchesReference, testing::ValuesIn(allCases()),
                         caseName);

TEST(Baselines, NamesAndVersions) {
  const BackendConfig config = hostConfig(bestHostIsa());
  for (const std::string& name : kBaselines) {
    const std::unique_ptr<Backend> backend = makeBaseline(name, config);
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->name(), name);
    EXPECT_FALSE(backend->version().empty()) << name;
  }
  EXPECT_EQ(makeEigenBackend(config)->version(), "3.4.0");
}

TEST(Baselines, ReportInvalidShapesInsteadOfFailing) {
  const BackendConfig config = hostConfig(bestHostIsa());
  Problem empty = brgemm(0, 8, 8, 1, false);
  Problem batched_gemm = gemm(8, 8, 8);
  batched_gemm.batch = 2;
  for (const std::string& name : kBaselines) {
    const std::unique_ptr<Backend> backend = makeBaseline(name, config);
    EXPECT_TRUE(backend->unsupportedReason(empty).has_value()) << name;
    EXPECT_TRUE(backend->unsupportedReason(batched_gemm).has_value()) << name;
    EXPECT_THROW(backend->prepare(empty, Operands{}), Error) << name;
  }
}

// On more threads, libxsmm shares a BRGEMM's rows out in panels (beta 0 and
// 1, f32 and bf16, ragged), skipping one too short for a panel per thread;
// Eigen skips BRGEMMs; both share a GEMM's blocks out. Each computes what one
// thread does.
TEST(Baselines, BrgemmsOnMoreThreadsRunInRowPanelsAndGemmsShareTheirBlocks) {
  if (usableCores().size() < 2) GTEST_SKIP() << "one core";
  placeOpenMpThreads(coresForThreads(2));
  const BackendConfig config = hostConfig(bestHostIsa(), 2);
  for (const std::string name : {"eigen", "libxsmm"}) {
    if (!libraryBuiltIn(name)) continue;
    const std::unique_ptr<Backend> backend = makeBaseline(name, config);
    const auto reason = backend->unsupportedReason(brgemm(8, 8, 8, 2, false));
    ASSERT_TRUE(reason.has_value()) << name;
    const char* why = name == "eigen" ? "a BRGEMM is a loop of small products" : "its 8 rows make one";
    EXPECT_NE(reason->find(why), std::string::npos) << *reason;
    const Problem problem = gemm(200, 130, 96);
    ASSERT_EQ(backend->unsupportedReason(problem), std::nullopt) << name;
    const RunOutcome outcome = runAgainstReference(*backend, problem);
    EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << name << ": " << outcome.verification.detail;
  }
  if (!libraryBuiltIn("libxsmm")) return;
  const std::unique_ptr<Backend> libxsmm = makeBaseline("libxsmm", config);
  for (bool accumulate : {false, true})
    for (const Problem& problem : {brgemm(64, 48, 40, 4, accumulate), brgemm(25, 18, 48, 3, accumulate),
                                   asBf16(brgemm(32, 64, 32, 2, accumulate))}) {
      SCOPED_TRACE(problem.describe());
      // bf16 needs a host libxsmm has a bf16 kernel for; f32 runs everywhere.
      if (problem.dtype == DType::BF16 && libxsmm->unsupportedReason(problem)) continue;
      ASSERT_EQ(libxsmm->unsupportedReason(problem), std::nullopt);
      const RunOutcome outcome = runAgainstReference(*libxsmm, problem);
      EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
      EXPECT_EQ(outcome.info.packing.rfind("A, C -> 2 row panels ", 0), 0u) << outcome.info.packing;
      EXPECT_NE(outcome.info.packing.find(", shared out among 2 threads"), std::string::npos) << outcome.info.packing;
    }
}

// A GEMM of one 64x64 block on two threads: libxsmm's blocks are halved in
// rows, so that each thread has one (blockingForThreads), f32 and bf16 alike.
TEST(Baselines, LibxsmmNarrowsTooFewGemmBlocksForItsThreads) {
  if (!libraryBuiltIn("libxsmm")) GTEST_SKIP() << "libxsmm not built in";
  if (usableCores().size() < 2) GTEST_SKIP() << "one core";
  placeOpenMpThreads(coresForThreads(2));
  const std::unique_ptr<Backend> backend = makeLibxsmmBackend(hostConfig(bestHostIsa(), 2));
  for (const Problem& problem : {gemm(64, 48, 300), asBf16(gemm(64, 48, 300))}) {
    if (backend->unsupportedReason(problem)) continue;  // bf16 needs a host libxsmm has a bf16 kernel for
    const RunOutcome outcome = runAgainstReference(*backend, problem);
    EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
    EXPECT_EQ(outcome.info.packing.rfind("A,B,C -> 32x48x", 0), 0u) << outcome.info.packing;
  }
}

TEST(Baselines, OnednnRunsWithTwoThreads) {
  const std::unique_ptr<Backend> backend = makeOnednnBackend(hostConfig(bestHostIsa(), 2), false);
  const Problem problem = gemm(256, 128, 96);
  if (!libraryBuiltIn("onednn")) GTEST_SKIP() << "oneDNN not built in";
  ASSERT_EQ(backend->unsupportedReason(problem), std::nullopt);
  const RunOutcome outcome = runAgainstReference(*backend, problem);
  EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
}

TEST(Baselines, LibxsmmGemmReportsItsBlocking) {
  if (!libraryBuiltIn("libxsmm")) GTEST_SKIP() << "libxsmm not built in";
  const std::unique_ptr<Backend> backend = makeLibxsmmBackend(hostConfig(bestHostIsa()));
  const RunOutcome outcome = runAgainstReference(*backend, gemm(100, 37, 129));
  EXPECT_EQ(outcome.info.packing.rfind("A,B,C -> ", 0), 0u) << outcome.info.packing;
  EXPECT_NE(outcome.info.packing.find(" blocks"), std::string::npos) << outcome.info.packing;
  EXPECT_NE(outcome.info.implementation.find("libxsmm brgemm ("), std::string::npos);
}

}  // namespace
}  // namespace nkbench::test
