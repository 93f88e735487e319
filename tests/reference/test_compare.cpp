#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "naive_gemm.h"
#include "reference/compare.h"

namespace nkbench {
namespace {

using test::makeProblem;
using test::naiveFp32Gemm;
using test::ReductionOrder;

struct Case {
  Problem problem;
  FillMode mode;
  ProblemData data;
  ReferenceResult reference;

  Case(Problem p, FillMode fill) : problem(p), mode(fill), data(makeProblemData(p, fill)) {
    reference = referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data());
  }
  FloatBuffer kernel(ReductionOrder order) const { return naiveFp32Gemm(problem, data, order); }
  Verification verify(const FloatBuffer& got) const {
    return verifyResult(problem, mode, got.data(), reference);
  }
};

TEST(Compare, StatusNames) {
  EXPECT_EQ(toString(VerifyStatus::Passed), "passed");
  EXPECT_EQ(toString(VerifyStatus::Failed), "failed");
  EXPECT_EQ(toString(VerifyStatus::Mistrusted), "mistrusted");
  EXPECT_EQ(toString(VerifyStatus::Skipped), "skipped");
  EXPECT_EQ(toString(VerifyStatus::Error), "error");
}

TEST(Compare, ExactFillPassesAnySummationOrder) {
  const Case test(makeProblem(16, 24, 64, 8, true), FillMode::ExactInteger);
  for (auto order : {ReductionOrder::Forward, ReductionOrder::Backward}) {
    const Verification result = test.verify(test.kernel(order));
    EXPECT_EQ(result.status, VerifyStatus::Passed) << result.detail;
    EXPECT_EQ(result.max_error, 0.0);
    EXPECT_EQ(result.tolerance, 0.0);
    EXPECT_EQ(result.mismatches, 0);
  }
}

TEST(Compare, ExactFillFlagsASingleUlp) {
  const Case test(makeProblem(8, 8, 32, 2, false), FillMode::ExactInteger);
  FloatBuffer got = test.kernel(ReductionOrder::Forward);
  got[3 * 8 + 5] = std::nextafter(got[3 * 8 + 5], std::numeric_limits<float>::infinity());
  const Verification result = test.verify(got);
  EXPECT_EQ(result.status, VerifyStatus::Failed);
  EXPECT_EQ(result.mismatches, 1);
  EXPECT_GT(result.max_error, 0.0);
  EXPECT_NE(result.detail.find("1 of 64"), std::string::npos) << result.detail;
  EXPECT_NE(result.detail.find("C[3,5]="), std::string::npos) << result.detail;
}

TEST(Compare, RandomFillPassesSummationOrderDifferences) {
  const Case test(makeProblem(16, 16, 256, 16, true), FillMode::Random);
  const FloatBuffer forward = test.kernel(ReductionOrder::Forward);
  const FloatBuffer backward = test.kernel(ReductionOrder::Backward);
  ASSERT_NE(forward, backward);  // the orders really round differently
  for (const auto* got : {&forward, &backward}) {
    const Verification result = test.verify(*got);
    EXPECT_EQ(result.status, VerifyStatus::Passed) << result.detail;
    EXPECT_GT(result.max_error, 0.0);
    EXPECT_LT(result.max_error, result.tolerance);
  }
}

TEST(Compare, RandomFillFlagsAWrongTerm) {
  const Case test(makeProblem(8, 8, 64, 4, false), FillMode::Random);
  FloatBuffer got = test.kernel(ReductionOrder::Forward);
  // As if one extra product of two unit values had been summed in.
  got[0] += 1.0f;
  const Verification result = test.verify(got);
  EXPECT_EQ(result.status, VerifyStatus::Failed);
  EXPECT_EQ(result.mismatches, 1);
  EXPECT_GT(result.max_error, result.tolerance);
}

TEST(Compare, NonFiniteResultsNeverPass) {
  for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
    const Case test(makeProblem(4, 4, 8, 1, false), mode);
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      FloatBuffer got = test.kernel(ReductionOrder::Forward);
      got[6] = bad;
      const Verification result = test.verify(got);
      EXPECT_EQ(result.status, VerifyStatus::Failed) << toString(mode);
      EXPECT_EQ(result.mismatches, 1);
      EXPECT_TRUE(std::isinf(result.max_error));
      EXPECT_NE(result.detail.find("C[1,2]="), std::string::npos) << result.detail;
    }
  }
}

TEST(Compare, AllZeroOutputFails) {
  for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
    const Case test(makeProblem(8, 8, 16, 2, false), mode);
    const Verification result = test.verify(FloatBuffer(64, 0.0f));
    EXPECT_EQ(result.status, VerifyStatus::Failed);
    EXPECT_EQ(result.mismatches, 64);
    EXPECT_NE(result.detail.find("64 of 64"), std::string::npos) << result.detail;
  }
}

TEST(Compare, DetailListsAtMostFivePoints) {
  const Case test(makeProblem(8, 8, 16, 2, false), FillMode::ExactInteger);
  FloatBuffer got = test.kernel(ReductionOrder::Forward);
  for (float& value : got) value += 1.0f;
  const std::string detail = test.verify(got).detail;
  std::size_t points = 0;
  for (std::size_t at = detail.find("C["); at != std::string::npos; at = detail.find("C[", at + 1))
    ++points;
  EXPECT_EQ(points, 5u) << detail;
}

TEST(Compare, MistrustsAMostlyZeroReference) {
  const Case test(makeProblem(8, 8, 16, 1, false), FillMode::ExactInteger);
  ReferenceResult zero_reference = test.reference;
  std::fill(zero_reference.value.begin(), zero_reference.value.end(), 0.0);
  const FloatBuffer nothing_written(64, 0.0f);
  const Verification result =
      verifyResult(test.problem, test.mode, nothing_written.data(), zero_reference);
  EXPECT_EQ(result.status, VerifyStatus::Mistrusted);
  EXPECT_EQ(result.reference_zero_fraction, 1.0);
  EXPECT_FALSE(result.detail.empty());
}

TEST(Compare, MistrustsAnAllZeroProblem) {
  const Problem p = makeProblem(4, 4, 4, 1, false);
  const FloatBuffer zeros(16, 0.0f);
  const ReferenceResult reference = referenceGemm(p, zeros.data(), zeros.data(), zeros.data());
  for (FillMode mode : {FillMode::ExactInteger, FillMode::Random})
    EXPECT_EQ(verifyResult(p, mode, zeros.data(), reference).status, VerifyStatus::Mistrusted);
}

TEST(Compare, ToleranceGrowsWithTheReduction) {
  const Case short_reduction(makeProblem(2, 2, 16, 1, false), FillMode::Random);
  const Case long_reduction(makeProblem(2, 2, 64, 8, false), FillMode::Random);
  const double short_tolerance = short_reduction.verify(short_reduction.kernel(ReductionOrder::Forward)).tolerance;
  const double long_tolerance = long_reduction.verify(long_reduction.kernel(ReductionOrder::Forward)).tolerance;
  EXPECT_GT(short_tolerance, 0.0);
  EXPECT_NEAR(long_tolerance / short_tolerance, (512.0 + 1) / (16.0 + 1), 1e-9);
}

}  // namespace
}  // namespace nkbench
