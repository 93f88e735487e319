#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "naive_gemm.h"
#include "operands/bf16.h"
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

// A bf16 C as a kernel writes it: the f32 sum rounded once, read back as floats.
FloatBuffer roundedToBf16(FloatBuffer values) {
  for (float& value : values) value = toFloat(toBFloat16(value));
  return values;
}

Problem bf16Problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, bool accumulate) {
  Problem p = makeProblem(m, n, k, batch, accumulate);
  p.dtype = DType::BF16;
  p.c_dtype = DType::BF16;
  return p;
}

TEST(CompareBf16C, ExactFillWantsTheCorrectlyRoundedSum) {
  // 64 x 32 products of magnitude up to 64: sums well past bf16's 8-bit integers.
  const Case test(bf16Problem(8, 16, 64, 32, true), FillMode::ExactInteger);
  const FloatBuffer sum = test.kernel(ReductionOrder::Forward);
  const FloatBuffer rounded = roundedToBf16(sum);
  ASSERT_NE(sum, rounded);  // some sums really need rounding
  const Verification pass = test.verify(rounded);
  EXPECT_EQ(pass.status, VerifyStatus::Passed) << pass.detail;
  EXPECT_EQ(pass.max_error, 0.0);
  // The unrounded f32 sum is not what a bf16 C can hold.
  EXPECT_EQ(test.verify(sum).status, VerifyStatus::Failed);
}

TEST(CompareBf16C, ExactFillFlagsAnOffByOneUlpRounding) {
  const Case test(bf16Problem(8, 16, 64, 32, false), FillMode::ExactInteger);
  FloatBuffer got = roundedToBf16(test.kernel(ReductionOrder::Forward));
  std::size_t at = 0;
  while (std::abs(got[at]) < 512.0f) ++at;  // an output whose bf16 ulp is above 1
  got[at] = toFloat(BFloat16{static_cast<std::uint16_t>(toBFloat16(got[at]).bits + 1)});
  const Verification result = test.verify(got);
  EXPECT_EQ(result.status, VerifyStatus::Failed);
  EXPECT_EQ(result.mismatches, 1);
}

TEST(CompareBf16C, RandomFillAllowsTheFinalRoundingOnly) {
  const Case test(bf16Problem(16, 16, 128, 8, true), FillMode::Random);
  const FloatBuffer rounded = roundedToBf16(test.kernel(ReductionOrder::Backward));
  const Verification pass = test.verify(rounded);
  EXPECT_EQ(pass.status, VerifyStatus::Passed) << pass.detail;
  FloatBuffer wrong = rounded;
  wrong[5] += 0.05f * std::max(1.0f, std::abs(wrong[5]));  // a few bf16 ulps off
  EXPECT_EQ(test.verify(wrong).status, VerifyStatus::Failed);
}

// vdpbf16ps's order: along K in pairs, the odd product is added first, then the
// even one, each sum rounded to fp32 (the products of two bf16 are exact).
FloatBuffer dotProductOrderGemm(const Problem& p, const ProblemData& data) {
  FloatBuffer c(data.c_init);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float sum = c[i * p.n + j];
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t pair = 0; pair < p.k; pair += 2)
          for (std::int64_t k : {pair + 1, pair}) {
            if (k >= p.k) continue;  // odd K: the padded product is zero
            sum += data.a[(b * p.m + i) * p.k + k] * data.b[(b * p.k + k) * p.n + j];
          }
      c[i * p.n + j] = sum;
    }
  return c;
}

TEST(CompareBf16, TheDotProductOrderPassesEveryCheck) {
  Problem problem = makeProblem(16, 16, 255, 8, true);
  problem.dtype = DType::BF16;
  const Case exact(problem, FillMode::ExactInteger);
  const Verification bit_exact = exact.verify(dotProductOrderGemm(problem, exact.data));
  EXPECT_EQ(bit_exact.status, VerifyStatus::Passed) << bit_exact.detail;
  EXPECT_EQ(bit_exact.max_error, 0.0);
  const Case random(problem, FillMode::Random);
  const FloatBuffer dot_order = dotProductOrderGemm(problem, random.data);
  ASSERT_NE(dot_order, random.kernel(ReductionOrder::Forward));  // the order really matters here
  const Verification within = random.verify(dot_order);
  EXPECT_EQ(within.status, VerifyStatus::Passed) << within.detail;
  EXPECT_GT(within.max_error, 0.0);
}

// Past a few terms the probabilistic bound, lambda sqrt(n) u, is the smaller.
TEST(Compare, ToleranceGrowsAsTheSquareRootOfTheReduction) {
  const Case short_reduction(makeProblem(2, 2, 16, 1, false), FillMode::Random);
  const Case long_reduction(makeProblem(2, 2, 64, 8, false), FillMode::Random);
  const double short_tolerance = short_reduction.verify(short_reduction.kernel(ReductionOrder::Forward)).tolerance;
  const double long_tolerance = long_reduction.verify(long_reduction.kernel(ReductionOrder::Forward)).tolerance;
  EXPECT_NEAR(short_tolerance, 12 * std::sqrt(16.0 + 1) * std::numeric_limits<float>::epsilon() / 2, 1e-15);
  EXPECT_NEAR(long_tolerance / short_tolerance, std::sqrt((512.0 + 1) / (16.0 + 1)), 1e-9);
  // One product and C_init: fp32's worst case, 4 n u, is the smaller.
  const Case one_term(makeProblem(2, 2, 1, 1, false), FillMode::Random);
  EXPECT_NEAR(one_term.verify(one_term.kernel(ReductionOrder::Forward)).tolerance,
              4 * 2 * std::numeric_limits<float>::epsilon() / 2, 1e-15);
}

// 8x8, K 4096, batch 64: a quarter million terms per output, whose worst-case
// bound held all zeros and a dropped batch entry. A kernel that sums in one
// sequential chain, either way, stays far inside the tolerance.
TEST(Compare, RandomFillOfALongReductionCatchesZerosAndADroppedBatchEntry) {
  const Problem problem = makeProblem(8, 8, 4096, 64, false);
  const Case test(problem, FillMode::Random);
  for (ReductionOrder order : {ReductionOrder::Forward, ReductionOrder::Backward}) {
    const Verification result = test.verify(test.kernel(order));
    EXPECT_EQ(result.status, VerifyStatus::Passed) << result.detail;
    EXPECT_LT(result.max_error * 20, result.tolerance);
  }
  EXPECT_EQ(test.verify(FloatBuffer(64, 0.0f)).status, VerifyStatus::Failed);

  ProblemData dropped = test.data;  // A's last batch entry zeroed: as if the kernel skipped it
  std::fill(dropped.a.end() - problem.m * problem.k, dropped.a.end(), 0.0f);
  const Verification result = test.verify(naiveFp32Gemm(problem, dropped, ReductionOrder::Forward));
  EXPECT_EQ(result.status, VerifyStatus::Failed);
  EXPECT_GT(result.mismatches, 0) << result.detail;  // about a quarter of the outputs, here 18
}

// Eight million terms: the tolerance holds zero for nearly every output, so a
// correct result cannot be told from zeros: mistrusted, saying why.
TEST(Compare, MistrustsARandomFillWhoseToleranceHoldsZero) {
  const Case test(makeProblem(1, 2, 65536, 128, false), FillMode::Random);
  const Verification result = test.verify(test.kernel(ReductionOrder::Forward));
  EXPECT_EQ(result.status, VerifyStatus::Mistrusted);
  EXPECT_NE(result.detail.find("within --fill random's tolerance of zero, as sums of 8388608 terms"),
            std::string::npos)
      << result.detail;
}

}  // namespace
}  // namespace nkbench
