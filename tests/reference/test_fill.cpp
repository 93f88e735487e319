#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "naive_gemm.h"
#include "operands/bf16.h"
#include "operands/fill.h"
#include "reference/reference_gemm.h"

namespace nkbench {
namespace {

using test::makeProblem;

constexpr double kFp32ExactLimit = 16777216.0;  // 2^24

// Largest sum over the reduction of |a| * |b|, plus |C_init|, over all outputs:
// a bound on every partial sum of that output in any order.
double worstPartialSumBound(const Problem& p, const ProblemData& data) {
  double worst = 0.0;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double bound = std::abs(data.c_init[i * p.n + j]);
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t k = 0; k < p.k; ++k)
          bound += std::abs(data.a[(b * p.m + i) * p.k + k]) *
                   std::abs(data.b[(b * p.k + k) * p.n + j]);
      worst = std::max(worst, bound);
    }
  return worst;
}

bool isSmallInteger(float value) { return value == std::trunc(value) && std::abs(value) <= 8.0f; }

TEST(Fill, ParsesModeNames) {
  EXPECT_EQ(parseFillMode("exact"), FillMode::ExactInteger);
  EXPECT_EQ(parseFillMode("random"), FillMode::Random);
  EXPECT_EQ(parseFillMode("Exact"), std::nullopt);
  EXPECT_EQ(toString(FillMode::ExactInteger), "exact");
  EXPECT_EQ(toString(FillMode::Random), "random");
}

TEST(Fill, ShapesFollowTheProblem) {
  const Problem p = makeProblem(5, 7, 3, 4, false);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  EXPECT_EQ(data.a.size(), 5u * 3 * 4);
  EXPECT_EQ(data.b.size(), 3u * 7 * 4);
  EXPECT_EQ(data.c_init.size(), 5u * 7);
}

TEST(Fill, ExactValuesAreSmallIntegers) {
  const ProblemData data = makeProblemData(makeProblem(16, 16, 16, 4, true), FillMode::ExactInteger);
  for (const auto* operand : {&data.a, &data.b, &data.c_init})
    for (float value : *operand) ASSERT_TRUE(isSmallInteger(value)) << value;
}

TEST(Fill, InitialCIsZeroUnlessAccumulating) {
  for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
    const ProblemData plain = makeProblemData(makeProblem(8, 8, 8, 2, false), mode);
    for (float value : plain.c_init) ASSERT_EQ(value, 0.0f);
    const ProblemData accumulating = makeProblemData(makeProblem(8, 8, 8, 2, true), mode);
    int nonzero = 0;
    for (float value : accumulating.c_init) nonzero += value != 0.0f;
    EXPECT_GT(nonzero, 48);
  }
}

TEST(Fill, Bf16OperandsHoldValuesExactlyRepresentableInBf16) {
  for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
    Problem p = makeProblem(16, 16, 33, 3, true);
    p.dtype = DType::BF16;
    const ProblemData data = makeProblemData(p, mode);
    for (const FloatBuffer* operand : {&data.a, &data.b})
      for (float value : *operand) ASSERT_EQ(value, toFloat(toBFloat16(value))) << toString(mode);
    // C stays f32: random initial values keep their full precision.
    if (mode == FillMode::Random) {
      int beyond_bf16 = 0;
      for (float value : data.c_init) beyond_bf16 += value != toFloat(toBFloat16(value));
      EXPECT_GT(beyond_bf16, 0);
    }
  }
}

TEST(Fill, RandomValuesAreUniformInMinusOneToOne) {
  const ProblemData data = makeProblemData(makeProblem(64, 64, 64, 4, false), FillMode::Random);
  double sum = 0.0;
  float low = 1.0f, high = -1.0f;
  for (float value : data.a) {
    ASSERT_GE(value, -1.0f);
    ASSERT_LT(value, 1.0f);
    sum += value;
    low = std::min(low, value);
    high = std::max(high, value);
  }
  EXPECT_NEAR(sum / double(data.a.size()), 0.0, 0.02);
  EXPECT_LT(low, -0.99f);
  EXPECT_GT(high, 0.99f);
}

// A brgemm with C_init, and an mlp with its biases.
TEST(Fill, IsDeterministicPerSeed) {
  for (const Problem& p :
       {makeProblem(33, 17, 65, 3, true), test::makeMlpProblem(DType::F32, 9, {33, 65, 17}, true, Activation::Relu)})
    for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
      SCOPED_TRACE(p.describe() + ", " + std::string(toString(mode)));
      const ProblemData first = makeProblemData(p, mode, 7);
      const ProblemData again = makeProblemData(p, mode, 7);
      const ProblemData other = makeProblemData(p, mode, 8);
      EXPECT_EQ(first.a, again.a);
      EXPECT_EQ(first.b, again.b);
      EXPECT_EQ(first.c_init, again.c_init);
      EXPECT_EQ(first.bias, again.bias);
      EXPECT_NE(first.a, other.a);
      EXPECT_NE(first.b, other.b);
      if (!first.bias.empty()) {
        EXPECT_NE(first.bias, other.bias);
      }
    }
}

// Each value depends on its index alone, not on how much is filled around it,
// which is what makes a chunked (parallel) fill thread-count independent.
TEST(Fill, ValuesDependOnlyOnTheirIndex) {
  const Problem small = makeProblem(4, 300, 256, 2, false);
  const Problem large = makeProblem(4, 300, 256, 5, false);  // B spans several fill chunks
  for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
    const ProblemData prefix = makeProblemData(small, mode);
    const ProblemData whole = makeProblemData(large, mode);
    ASSERT_TRUE(std::equal(prefix.b.begin(), prefix.b.end(), whole.b.begin()));
    ASSERT_TRUE(std::equal(prefix.a.begin(), prefix.a.end(), whole.a.begin()));
  }
}

TEST(Fill, ExactPartialSumsStayExactForShortReductions) {
  const Problem p = makeProblem(8, 8, 1024, 32, true);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  EXPECT_LT(worstPartialSumBound(p, data), kFp32ExactLimit);
  // Short reductions need no sparsity: A stays dense (values are nonzero).
  for (float value : data.a) ASSERT_NE(value, 0.0f);
}

// K*batch = 4 Mi products per output, 16x what dense data could take: the bound
// must still hold for every output, and the sparsity must not waste the range.
TEST(Fill, ExactPartialSumsStayExactForHugeReductions) {
  const Problem p = makeProblem(3, 2, std::int64_t{1} << 20, 4, true);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  const double bound = worstPartialSumBound(p, data);
  EXPECT_LT(bound, kFp32ExactLimit);
  EXPECT_GT(bound, kFp32ExactLimit / 8);

  // Any summation order then gives the exact (double) reference bit for bit.
  const ReferenceResult reference = referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data());
  for (auto order : {test::ReductionOrder::Forward, test::ReductionOrder::Backward}) {
    const FloatBuffer c = test::naiveFp32Gemm(p, data, order);
    for (std::size_t index = 0; index < c.size(); ++index)
      ASSERT_EQ(double(c[index]), reference.value[index]) << "output " << index;
  }
}

TEST(Fill, ExactResultsAreMostlyNonzero) {
  const Problem shapes[] = {
      makeProblem(1, 1, 1, 1, false),    makeProblem(8, 32, 1, 1, false),
      makeProblem(32, 32, 32, 32, false), makeProblem(64, 64, 64, 1, true),
      makeProblem(7, 33, 5, 3, false),   makeProblem(4, 4, 100000, 8, false),
  };
  for (const Problem& p : shapes) {
    const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
    const ReferenceResult reference =
        referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data());
    std::int64_t zeros = 0;
    for (double value : reference.value) zeros += value == 0.0;
    EXPECT_LE(double(zeros), 0.05 * double(p.cElements())) << p.describe();
  }
}

TEST(Fill, EmptyProblemsGiveEmptyOperands) {
  const ProblemData data = makeProblemData(makeProblem(0, 4, 0, 1, true), FillMode::ExactInteger);
  EXPECT_TRUE(data.a.empty());
  EXPECT_TRUE(data.b.empty());
  EXPECT_TRUE(data.c_init.empty());
}

}  // namespace
}  // namespace nkbench
