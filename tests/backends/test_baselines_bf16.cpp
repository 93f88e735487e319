// Every baseline backend on bf16 operands (f32 accumulation; f32 or bf16 C) against
// the reference: exact-integer data keeps every product and partial sum exact in
// f32, so an f32 C must match bit for bit, and a bf16 C must hold the correctly
// rounded sum, odd K and remainders included.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "tests/backends/baseline_test_support.h"

namespace nkbench::test {
namespace {

std::vector<BaselineCase> allCases() {
  std::vector<Problem> problems;
  // Remainders in every dimension, odd K (VNNI padding), batch 1 and 1x1x1.
  for (bool accumulate : {false, true}) {
    problems.push_back(brgemm(7, 33, 5, 1, accumulate));
    problems.push_back(brgemm(8, 32, 32, 4, accumulate));
    problems.push_back(brgemm(32, 32, 32, 8, accumulate));
    problems.push_back(brgemm(1, 1, 1, 1, accumulate));
    problems.push_back(brgemm(17, 3, 65, 3, accumulate));
    problems.push_back(brgemm(16, 64, 63, 2, accumulate));
  }
  // gemm: one odd K block (9), odd K over blocks (127, 129), and even shapes.
  problems.push_back(gemm(7, 33, 5));
  problems.push_back(gemm(9, 9, 9));
  problems.push_back(gemm(64, 64, 64));
  problems.push_back(gemm(50, 64, 127));
  problems.push_back(gemm(100, 37, 129));
  problems.push_back(gemm(256, 128, 96));

  std::vector<BaselineCase> cases;
  for (const std::string& backend : kBaselines)
    for (const Problem& problem : problems)
      for (DType c_dtype : {DType::F32, DType::BF16}) cases.push_back({backend, asBf16(problem, c_dtype)});
  return cases;
}

// Eigen widens bf16 to f32 anywhere; libxsmm and oneDNN must run bf16 wherever the
// host has AVX-512 BF16 (the default cap is the host's best level).
bool mustSupportBf16(const std::string& backend) {
  if (backend == "eigen") return true;
  return libraryBuiltIn(backend) && detectCpuFeatures().has(Isa::Avx512Bf16);
}

class Bf16BaselineMatchesReference : public testing::TestWithParam<BaselineCase> {};

TEST_P(Bf16BaselineMatchesReference, BitForBit) {
  const BaselineCase& param = GetParam();
  const std::unique_ptr<Backend> backend = makeBaseline(param.backend, hostConfig(bestHostIsa()));
  ASSERT_NE(backend, nullptr);
  if (const auto reason = backend->unsupportedReason(param.problem)) {
    if (mustSupportBf16(param.backend)) FAIL() << "unexpectedly unsupported: " << *reason;
    GTEST_SKIP() << *reason;
  }
  const RunOutcome outcome = runAgainstReference(*backend, param.problem);
  const Verification& verification = outcome.verification;
  // As for f32, "mistrusted" (1x1x1 with beta 1) still proves the result: C starts
  // from NaN or from a nonzero C, so a kernel that wrote nothing would mismatch.
  EXPECT_EQ(verification.mismatches, 0)
      << verification.detail << " [" << outcome.info.implementation << "]";
  EXPECT_TRUE(verification.status == VerifyStatus::Passed ||
              verification.status == VerifyStatus::Mistrusted)
      << toString(verification.status) << ": " << verification.detail << " ["
      << outcome.info.implementation << "]";
  EXPECT_FALSE(outcome.info.implementation.empty());
}

INSTANTIATE_TEST_SUITE_P(BaselinesBf16, Bf16BaselineMatchesReference,
                         testing::ValuesIn(allCases()), caseName);

TEST(BaselinesBf16, ImplementationsSayBf16) {
  const BackendConfig config = hostConfig(bestHostIsa());
  const Problem problem = asBf16(brgemm(32, 32, 32, 4, false));
  for (const std::string& name : kBaselines) {
    const std::unique_ptr<Backend> backend = makeBaseline(name, config);
    if (backend->unsupportedReason(problem)) continue;  // covered by BitForBit
    const RunOutcome outcome = runAgainstReference(*backend, problem);
    const std::string& implementation = outcome.info.implementation;
    if (name == "eigen") {
      EXPECT_NE(implementation.find("bf16 widened to f32"), std::string::npos) << implementation;
      EXPECT_EQ(outcome.info.packing, "A,B bf16 -> f32");
    } else if (name == "libxsmm") {
      EXPECT_NE(implementation.find("libxsmm bf16 brgemm ("), std::string::npos) << implementation;
      EXPECT_NE(outcome.info.packing.find("VNNI"), std::string::npos) << outcome.info.packing;
    } else if (detectCpuFeatures().has(Isa::Avx512Bf16)) {
      EXPECT_NE(implementation.find("bf16"), std::string::npos) << name << ": " << implementation;
    }
  }
}

// The exact fill's sums are integers of up to ~2^14 here: most need rounding to
// bf16's 8 significant bits, so a bf16 C really tests the rounding.
TEST(BaselinesBf16, Bf16CSumsNeedRounding) {
  const Problem problem = asBf16(brgemm(32, 32, 32, 8, true), DType::BF16);
  const ProblemData data = makeProblemData(problem, FillMode::ExactInteger);
  const ReferenceResult reference = referenceGemm(problem, data.a.data(), data.b.data(), data.c_init.data());
  const auto inexact = std::count_if(reference.value.begin(), reference.value.end(),
                                     [](double v) { return double(toFloat(roundToBFloat16(v))) != v; });
  EXPECT_GT(inexact, std::ptrdiff_t(reference.value.size() / 4));
}

TEST(BaselinesBf16, LibxsmmGemmBlocksKeepKEven) {
  const std::unique_ptr<Backend> backend = makeLibxsmmBackend(hostConfig(bestHostIsa()));
  const Problem problem = asBf16(gemm(100, 37, 129));
  if (const auto reason = backend->unsupportedReason(problem)) GTEST_SKIP() << *reason;
  const RunOutcome outcome = runAgainstReference(*backend, problem);
  EXPECT_EQ(outcome.info.packing, "A,B,C -> 50x37x44 blocks, B in VNNI pairs");
  EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
}

}  // namespace
}  // namespace nkbench::test
