// The mlp kind's fill, reference and verification (operands/fill.h,
// reference/reference_mlp.h, reference/compare.h).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "naive_gemm.h"
#include "operands/bf16.h"
#include "reference/compare.h"
#include "operands/fill.h"
#include "reference/reference_gemm.h"
#include "reference/reference_mlp.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

using test::makeMlpProblem;
using test::ReductionOrder;

constexpr double kFp32ExactLimit = 16777216.0;  // 2^24

// An mlp computed the plain way in f32, each sum in the given order, then the
// bias and the activation; a bf16 C holds each output rounded once, and the next
// layer reads it so. The stand-in for a kernel under test.
FloatBuffer naiveMlp(const Problem& p, const ProblemData& data, ReductionOrder order) {
  FloatBuffer c(static_cast<std::size_t>(p.cElements()));
  std::vector<float> input(data.a.begin(), data.a.end());
  for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
    const std::int64_t k = p.mlp.widths[std::size_t(layer)], n = p.mlp.widths[std::size_t(layer) + 1];
    const float* w = data.b.data() + p.mlp.weightOffset(layer);
    float* out = c.data() + p.mlpOutputOffset(layer);
    for (std::int64_t i = 0; i < p.m; ++i) {
      // Row by row, each output's sum in the given order along the reduction.
      std::vector<float> sums(std::size_t(n), 0.0f);
      for (std::int64_t step = 0; step < k; ++step) {
        const std::int64_t r = order == ReductionOrder::Forward ? step : k - 1 - step;
        const float x = input[std::size_t(i * k + r)];
        for (std::int64_t j = 0; j < n; ++j) sums[std::size_t(j)] += x * w[r * n + j];
      }
      for (std::int64_t j = 0; j < n; ++j) {
        float sum = sums[std::size_t(j)];
        if (p.mlp.bias) sum += data.bias[std::size_t(p.mlp.biasOffset(layer) + j)];
        if (p.mlp.activation == Activation::Relu) sum = std::max(sum, 0.0f);
        if (p.c_dtype == DType::BF16) sum = toFloat(toBFloat16(sum));
        out[i * n + j] = sum;
      }
    }
    input.assign(out, out + p.m * n);
  }
  return c;
}

// One layer's slice of the reference values.
std::vector<double> layerValues(const Problem& p, const ReferenceResult& reference, std::int64_t layer) {
  const auto first = reference.value.begin() + p.mlpOutputOffset(layer);
  return {first, reference.value.begin() + p.mlpOutputOffset(layer + 1)};
}

double zeroFraction(const std::vector<double>& values) {
  return double(std::count(values.begin(), values.end(), 0.0)) / double(values.size());
}

struct MlpCase {
  Problem problem;
  FillMode mode;
  ProblemData data;
  ReferenceResult reference;

  MlpCase(Problem p, FillMode fill, std::uint64_t seed = 1)
      : problem(std::move(p)), mode(fill), data(makeProblemData(problem, fill, seed)),
        reference(referenceMlp(problem, data)) {}
  Verification verify(const FloatBuffer& got) const { return verifyResult(problem, mode, got.data(), reference); }
};

// Shapes with a wide layer, a deep one and a narrow one, with and without the epilogue.
std::vector<Problem> exactShapes(DType dtype) {
  return {makeMlpProblem(dtype, 4, {1024, 1024, 1024, 1024}, true, Activation::Relu),
          makeMlpProblem(dtype, 16, {64, 1024, 16}, true, Activation::Relu),
          makeMlpProblem(dtype, 4, {2048, 8, 2048, 4}, false, Activation::None),
          makeMlpProblem(dtype, 5, {96, 96, 96, 96, 96, 96, 96}, true, Activation::None),
          makeMlpProblem(dtype, 3, {2048, 2048}, true, Activation::Relu)};
}

TEST(MlpFill, OperandsFollowTheLayout) {
  for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
    const Problem p = makeMlpProblem(DType::F32, 16, {64, 96, 32}, true, Activation::Relu);
    const ProblemData data = makeProblemData(p, mode);
    EXPECT_EQ(data.a.size(), 16u * 64);
    EXPECT_EQ(data.b.size(), 64u * 96 + 96 * 32);
    EXPECT_EQ(data.bias.size(), 96u + 32);
    ASSERT_EQ(data.c_init.size(), 16u * 96 + 16 * 32);
    for (float value : data.c_init) ASSERT_EQ(value, 0.0f);
    EXPECT_TRUE(
        makeProblemData(makeMlpProblem(DType::F32, 16, {64, 96, 32}, false, Activation::Relu), mode).bias.empty());
  }
}

TEST(MlpFill, ExactValuesAreSmallIntegersAndSparseWeights) {
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Problem& p : exactShapes(dtype)) {
      SCOPED_TRACE(p.describe());
      const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
      for (float x : data.a) ASSERT_TRUE(x != 0.0f && x == std::trunc(x) && std::abs(x) <= 8.0f) << x;
      for (float b : data.bias) ASSERT_TRUE(b != 0.0f && b == std::trunc(b) && std::abs(b) <= 8.0f) << b;
      // Every weight is 0 or in {-2, -1, 1, 2}; each column sums at least one and at most `terms`.
      const std::int64_t terms = exactMlpTermsPerOutput(p);
      for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
        const std::int64_t k = p.mlp.widths[std::size_t(layer)], n = p.mlp.widths[std::size_t(layer) + 1];
        const float* w = data.b.data() + p.mlp.weightOffset(layer);
        std::vector<std::int64_t> nonzero(std::size_t(n), 0);
        for (std::int64_t r = 0; r < k; ++r)
          for (std::int64_t j = 0; j < n; ++j) {
            const float value = w[r * n + j];
            ASSERT_TRUE(value == 0.0f || value == 1.0f || value == -1.0f || value == 2.0f || value == -2.0f) << value;
            nonzero[std::size_t(j)] += value != 0.0f;
          }
        for (std::int64_t j = 0; j < n; ++j) {
          ASSERT_GE(nonzero[std::size_t(j)], 1) << "layer " << layer + 1 << " column " << j;
          ASSERT_LE(nonzero[std::size_t(j)], terms) << "layer " << layer + 1 << " column " << j;
        }
      }
      // The values are bf16 values as they are (the caller converts them).
      for (const FloatBuffer* operand : {&data.a, &data.b, &data.bias})
        for (float value : *operand) ASSERT_EQ(value, toFloat(toBFloat16(value)));
    }
}

// As many weights per output as the depth allows: four 1024-wide layers take 63
// (64 t^3 + 32 t^2 + 16 t + 8 < 2^24), a single layer is dense.
TEST(MlpFill, ExactTermsAreAsManyAsTheDepthAllows) {
  EXPECT_EQ(exactMlpTermsPerOutput(makeMlpProblem(DType::F32, 8, {1024, 1024, 1024, 1024}, true, Activation::Relu)),
            63);
  EXPECT_EQ(exactMlpTermsPerOutput(makeMlpProblem(DType::F32, 8, {4096, 4096}, true, Activation::Relu)), 4096);
  EXPECT_EQ(exactMlpTermsPerOutput(makeMlpProblem(DType::F32, 8, {2048, 2048}, true, Activation::Relu)), 2048);
  EXPECT_EQ(exactMlpTermsPerOutput(makeMlpProblem(DType::F32, 8, {64, 1024, 16}, true, Activation::Relu)), 1024);
  EXPECT_EQ(exactMlpTermsPerOutput(makeMlpProblem(DType::F32, 8, {3, 5}, false, Activation::None)), 5);
}

// Every layer's every partial sum, in any order, stays an integer below 2^24,
// computed from the previous layer as a kernel reads it (rounded to bf16 for a
// bf16 mlp): f32 sums are then exact, and a bf16 C is one correct rounding.
TEST(MlpFill, ExactOutputsStayExactThroughEveryLayer) {
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Problem& p : exactShapes(dtype)) {
      SCOPED_TRACE(p.describe());
      const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
      const ReferenceResult reference = referenceMlp(p, data);
      std::vector<double> input(data.a.begin(), data.a.end());
      double largest = 0.0;
      for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
        const std::int64_t k = p.mlp.widths[std::size_t(layer)], n = p.mlp.widths[std::size_t(layer) + 1];
        const float* w = data.b.data() + p.mlp.weightOffset(layer);
        for (std::int64_t i = 0; i < p.m; ++i) {
          std::vector<double> bounds(std::size_t(n), 0.0);
          if (p.mlp.bias)
            for (std::int64_t j = 0; j < n; ++j)
              bounds[std::size_t(j)] = std::abs(data.bias[std::size_t(p.mlp.biasOffset(layer) + j)]);
          for (std::int64_t r = 0; r < k; ++r) {
            const double x = std::abs(input[std::size_t(i * k + r)]);
            for (std::int64_t j = 0; j < n; ++j) bounds[std::size_t(j)] += x * std::abs(w[r * n + j]);
          }
          for (std::int64_t j = 0; j < n; ++j)
            ASSERT_LT(bounds[std::size_t(j)], kFp32ExactLimit) << "layer " << layer + 1 << " output " << i << "," << j;
          largest = std::max(largest, *std::max_element(bounds.begin(), bounds.end()));
        }
        const std::vector<double> values = layerValues(p, reference, layer);
        for (double value : values) ASSERT_EQ(value, std::trunc(value));
        input = values;
        if (dtype == DType::BF16)
          for (double& value : input) value = double(toFloat(roundToBFloat16(value)));
      }
      EXPECT_GT(largest, 64.0);  // the sums are more than a handful of terms
      // Then any order gives the reference bit for bit (a bf16 C its correct rounding).
      for (auto order : {ReductionOrder::Forward, ReductionOrder::Backward}) {
        const FloatBuffer got = naiveMlp(p, data, order);
        for (std::size_t index = 0; index < got.size(); ++index) {
          const double expected =
              dtype == DType::BF16 ? double(toFloat(roundToBFloat16(reference.value[index]))) : reference.value[index];
          ASSERT_EQ(double(got[index]), expected) << "output " << index;
        }
      }
    }
}

// The worst case the term count allows, every term at its largest: a bf16
// layer reads the one before rounded to bf16, which may round up, so the
// bound must carry that rounding (379-2762-3507 once summed to 16792968,
// above 2^24, where an f32 sum is no longer exact).
TEST(MlpFill, Bf16WorstCaseStaysBelow2To24) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    const Problem p = makeMlpProblem(dtype, 1, {379, 2762, 3507}, true, Activation::None);
    SCOPED_TRACE(p.describe());
    const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
    double worst_input = 8.0;  // |X| <= 8
    for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
      const std::int64_t k = p.mlp.widths[std::size_t(layer)], n = p.mlp.widths[std::size_t(layer) + 1];
      const float* w = data.b.data() + p.mlp.weightOffset(layer);
      std::vector<std::int64_t> nonzero(std::size_t(n), 0);
      for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t j = 0; j < n; ++j) nonzero[std::size_t(j)] += w[r * n + j] != 0.0f;
      const double terms = double(*std::max_element(nonzero.begin(), nonzero.end()));
      const double worst = terms * 2.0 * worst_input + 8.0;  // |w| <= 2, |b| <= 8
      EXPECT_LT(worst, kFp32ExactLimit) << "layer " << layer + 1 << ": " << terms << " terms of up to 2 x "
                                        << worst_input;
      worst_input = dtype == DType::BF16 ? double(toFloat(roundToBFloat16(worst))) : worst;
    }
  }
}

// ReLU zeroes about half of each layer; the fill must leave enough alive that a
// kernel writing zeros cannot pass, in every layer, for the seeds the runner tries.
TEST(MlpFill, ReluLeavesAMeaningfulFractionNonzero) {
  for (DType dtype : {DType::F32, DType::BF16})
    for (FillMode mode : {FillMode::ExactInteger, FillMode::Random})
      for (const Problem& p : {makeMlpProblem(dtype, 8, {1024, 1024, 1024, 1024}, true, Activation::Relu),
                               makeMlpProblem(dtype, 32, {64, 96, 32}, false, Activation::Relu),
                               makeMlpProblem(dtype, 64, {16, 16, 16, 16, 16, 16}, true, Activation::Relu)})
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
          SCOPED_TRACE(p.describe() + " " + std::string(toString(mode)) + " seed " + std::to_string(seed));
          const MlpCase test(p, mode, seed);
          for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
            const double zeros = zeroFraction(layerValues(p, test.reference, layer));
            EXPECT_GT(zeros, 0.2) << "layer " << layer + 1;  // ReLU does cut
            EXPECT_LT(zeros, 0.75) << "layer " << layer + 1;
          }
          EXPECT_EQ(tooManyReferenceZeros(p, test.reference), std::nullopt);
        }
}

// Random weights are scaled by a power of two near 1/sqrt(C_{l-1}): outputs stay near 1, layer after layer.
TEST(MlpFill, RandomOutputsStayNearOneThroughTheLayers) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    const Problem p = makeMlpProblem(dtype, 16, {1024, 256, 4096, 64, 64}, true, Activation::None);
    SCOPED_TRACE(p.describe());
    const ProblemData data = makeProblemData(p, FillMode::Random);
    // Uniform in [-1, 1) and [-0.5, 0.5), rounded to bf16 for a bf16 mlp (which may reach the end).
    for (float x : data.a) ASSERT_TRUE(x >= -1.0f && x <= 1.0f) << x;
    for (float b : data.bias) ASSERT_TRUE(b >= -0.5f && b <= 0.5f) << b;
    const double scales[] = {1.0 / 32, 1.0 / 16, 1.0 / 64, 1.0 / 8};  // 2^-round(log2(C)/2)
    for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
      const float* w = data.b.data() + p.mlp.weightOffset(layer);
      float largest = 0.0f;
      for (std::int64_t index = 0; index < p.mlp.weightOffset(layer + 1) - p.mlp.weightOffset(layer); ++index)
        largest = std::max(largest, std::abs(w[index]));
      EXPECT_LE(largest, scales[layer]) << "layer " << layer + 1;
      EXPECT_GT(largest, 0.9 * scales[layer]) << "layer " << layer + 1;
    }
    const ReferenceResult reference = referenceMlp(p, data);
    for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
      double squares = 0.0;
      const std::vector<double> values = layerValues(p, reference, layer);
      for (double value : values) squares += value * value;
      const double rms = std::sqrt(squares / double(values.size()));
      EXPECT_GT(rms, 0.1) << "layer " << layer + 1;
      EXPECT_LT(rms, 4.0) << "layer " << layer + 1;
    }
  }
}

// Y_1 = relu(X W_1 + b_1), Y_2 = relu(Y_1 W_2 + b_2), worked by hand.
ProblemData handData() {
  ProblemData data;
  data.a = {1, 2, 3, -1, 0, 2};           // X: 2 x 3
  data.b = {1, -1, 2, 0, -1, 1,           // W_1: 3 x 2
            2, 1, -3, 1};                 // W_2: 2 x 2
  data.bias = {1, -2, 0.5f, -1};          // b_1, b_2
  data.c_init.assign(8, 0.0f);
  return data;
}

TEST(ReferenceMlp, MatchesAHandComputedTwoLayerMlp) {
  const Problem p = makeMlpProblem(DType::F32, 2, {3, 2, 2}, true, Activation::Relu);
  const ReferenceResult reference = referenceMlp(p, handData());
  // X W_1 + b_1 = [[3, 0], [-2, 1]] -> relu [[3, 0], [0, 1]]
  // Y_1 W_2 + b_2 = [[6.5, 2], [-2.5, 0]] -> relu [[6.5, 2], [0, 0]]
  EXPECT_EQ(reference.value, (std::vector<double>{3, 0, 0, 1, 6.5, 2, 0, 0}));
  // Each layer's own sum of |terms|: |X| |W_1| + |b_1|, then |Y_1| |W_2| + |b_2|.
  EXPECT_EQ(reference.magnitude, (std::vector<double>{9, 6, 4, 5, 6.5, 4, 3.5, 2}));
  // X is read as it is; Y_1 may differ by its sum's and its storing's rounding.
  for (std::size_t at = 0; at < 4; ++at) EXPECT_EQ(reference.carried[at], 0.0);
  for (std::size_t at = 4; at < 8; ++at) {
    EXPECT_GT(reference.carried[at], 0.0);
    EXPECT_LT(reference.carried[at], 1e-5);
  }

  // Without the epilogue: X W_1 = [[2, 2], [-3, 3]], then [[2, 2], [-3, 3]] W_2 = [[-2, 4], [-15, 0]].
  const ReferenceResult plain =
      referenceMlp(makeMlpProblem(DType::F32, 2, {3, 2, 2}, false, Activation::None), handData());
  EXPECT_EQ(plain.value, (std::vector<double>{2, 2, -3, 3, -2, 4, -15, 0}));
  EXPECT_EQ(plain.magnitude, (std::vector<double>{8, 4, 3, 3, 10, 4, 15, 6}));
}

// A bf16 C holds each layer's output rounded to bf16, and the next layer reads
// that: 200 + 59 = 259 is held as 260 (ties to even), so Y_2 = 3 * 260 = 780, not 777.
TEST(ReferenceMlp, Bf16NextLayerReadsTheRoundedOutput) {
  ProblemData data;
  data.a = {200, 59};
  data.b = {1, 1, 3};
  data.c_init.assign(2, 0.0f);
  const ReferenceResult bf16 = referenceMlp(makeMlpProblem(DType::BF16, 1, {2, 1, 1}, false, Activation::None), data);
  EXPECT_EQ(bf16.value, (std::vector<double>{259, 780}));  // each layer's output before its own rounding
  const ReferenceResult f32 = referenceMlp(makeMlpProblem(DType::F32, 1, {2, 1, 1}, false, Activation::None), data);
  EXPECT_EQ(f32.value, (std::vector<double>{259, 777}));

  // With a bias and ReLU: relu(259 - 0.5) = 258.5 -> bf16 258; 258 * 3 + 0.5 = 774.5.
  data.bias = {-0.5f, 0.5f};
  const ReferenceResult biased = referenceMlp(makeMlpProblem(DType::BF16, 1, {2, 1, 1}, true, Activation::Relu), data);
  EXPECT_EQ(biased.value, (std::vector<double>{258.5, 774.5}));
}

// Without an epilogue each layer is the gemm of the previous output (as stored) and its weights.
TEST(ReferenceMlp, EachLayerIsTheGemmOfThePreviousOutput) {
  const Problem p = makeMlpProblem(DType::F32, 12, {40, 24, 56}, false, Activation::None);
  const ProblemData data = makeProblemData(p, FillMode::Random);
  const ReferenceResult reference = referenceMlp(p, data);
  FloatBuffer input(data.a);
  for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
    const Problem gemm = p.mlpLayer(layer);
    const FloatBuffer no_c(static_cast<std::size_t>(gemm.cElements()), 0.0f);
    const ReferenceResult expected =
        referenceGemm(gemm, input.data(), data.b.data() + p.mlp.weightOffset(layer), no_c.data());
    const std::vector<double> values = layerValues(p, reference, layer);
    ASSERT_EQ(values.size(), expected.value.size());
    for (std::size_t index = 0; index < values.size(); ++index)
      ASSERT_NEAR(values[index], expected.value[index], 1e-12 * expected.magnitude[index])
          << "layer " << layer + 1 << " output " << index;
    input.assign(values.size(), 0.0f);
    std::transform(values.begin(), values.end(), input.begin(), [](double v) { return float(v); });
  }
}

TEST(MlpCompare, ExactFillPassesEveryLayerBitForBit) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    const MlpCase test(makeMlpProblem(dtype, 16, {64, 96, 32}, true, Activation::Relu), FillMode::ExactInteger);
    for (auto order : {ReductionOrder::Forward, ReductionOrder::Backward}) {
      const Verification result = test.verify(naiveMlp(test.problem, test.data, order));
      EXPECT_EQ(result.status, VerifyStatus::Passed) << result.detail;
      EXPECT_EQ(result.max_error, 0.0);
      EXPECT_EQ(result.mismatches, 0);
    }
  }
}

TEST(MlpCompare, AWrongValueInLayerTwoFailsNamingIt) {
  const MlpCase test(makeMlpProblem(DType::F32, 16, {64, 96, 32}, true, Activation::Relu), FillMode::ExactInteger);
  FloatBuffer got = naiveMlp(test.problem, test.data, ReductionOrder::Forward);
  got[std::size_t(test.problem.mlpOutputOffset(1) + 3 * 32 + 5)] += 1.0f;
  const Verification result = test.verify(got);
  EXPECT_EQ(result.status, VerifyStatus::Failed);
  EXPECT_EQ(result.mismatches, 1);
  EXPECT_EQ(result.max_error, 1.0);
  EXPECT_NE(result.detail.find("1 of 2048 outputs wrong"), std::string::npos) << result.detail;
  EXPECT_NE(result.detail.find("layer 2's Y[3,5]="), std::string::npos) << result.detail;
  EXPECT_EQ(result.detail.find("layer 1"), std::string::npos) << result.detail;

  // One ulp off in layer 1, row 15, column 95 (its last output).
  FloatBuffer first = naiveMlp(test.problem, test.data, ReductionOrder::Forward);
  float& last = first[std::size_t(test.problem.mlpOutputOffset(1) - 1)];
  last = std::nextafter(last, std::numeric_limits<float>::infinity());
  const Verification layer_one = test.verify(first);
  EXPECT_EQ(layer_one.status, VerifyStatus::Failed);
  EXPECT_NE(layer_one.detail.find("layer 1's Y[15,95]="), std::string::npos) << layer_one.detail;
}

// A kernel that writes the last layer only (into C, which starts as NaN) fails:
// every layer's output is checked, not just the final one.
TEST(MlpCompare, EveryLayersOutputIsChecked) {
  const MlpCase test(makeMlpProblem(DType::F32, 8, {32, 48, 16}, true, Activation::Relu), FillMode::ExactInteger);
  FloatBuffer got = naiveMlp(test.problem, test.data, ReductionOrder::Forward);
  std::fill(got.begin(), got.begin() + test.problem.mlpOutputOffset(1), std::numeric_limits<float>::quiet_NaN());
  const Verification result = test.verify(got);
  EXPECT_EQ(result.status, VerifyStatus::Failed);
  EXPECT_EQ(result.mismatches, 8 * 48);
  EXPECT_NE(result.detail.find("layer 1's Y[0,0]=nan"), std::string::npos) << result.detail;
}

TEST(MlpCompare, RandomFillPassesOrderDifferencesAndFlagsAWrongValue) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(toString(dtype));
    const MlpCase test(makeMlpProblem(dtype, 16, {256, 384, 128}, true, Activation::Relu), FillMode::Random);
    const FloatBuffer forward = naiveMlp(test.problem, test.data, ReductionOrder::Forward);
    const FloatBuffer backward = naiveMlp(test.problem, test.data, ReductionOrder::Backward);
    // The orders really round differently (in f32; a bf16 C mostly rounds it away).
    if (dtype == DType::F32) {
      ASSERT_NE(forward, backward);
    }
    for (const FloatBuffer* got : {&forward, &backward}) {
      const Verification result = test.verify(*got);
      EXPECT_EQ(result.status, VerifyStatus::Passed) << result.detail;
      EXPECT_GT(result.max_error, 0.0);
      // In bf16 the outputs are rounded, which the own sum's tolerance does not cover.
      if (dtype == DType::F32) {
        EXPECT_LT(result.max_error, result.tolerance);
      }
    }
    // One output of layer 2 off by a fraction of its sum of |terms|: 0.1% in f32; in bf16, whose
    // bound carries layer 1's roundings, 5%.
    FloatBuffer wrong = forward;
    const std::size_t at = std::size_t(test.problem.mlpOutputOffset(1) + 7);
    wrong[at] += float((dtype == DType::F32 ? 1e-3 : 0.05) * test.reference.magnitude[at]);
    const Verification result = test.verify(wrong);
    EXPECT_EQ(result.status, VerifyStatus::Failed);
    EXPECT_NE(result.detail.find("layer 2's Y["), std::string::npos) << result.detail;
  }
}

// Layer l's tolerance is its own sum's; what earlier layers carry in is the
// reference's, output by output, and grows with each bf16 rounding.
TEST(MlpCompare, EachLayerHasItsOwnSumsToleranceAndWhatEarlierLayersCarryIn) {
  const double u = std::numeric_limits<float>::epsilon() / 2;
  const MlpCase f32(makeMlpProblem(DType::F32, 4, {64, 96, 32}, false, Activation::None), FillMode::Random);
  const Verification f32_result = f32.verify(naiveMlp(f32.problem, f32.data, ReductionOrder::Forward));
  EXPECT_EQ(f32_result.status, VerifyStatus::Passed) << f32_result.detail;
  EXPECT_NEAR(f32_result.tolerance, 12 * std::sqrt(96.0 + 1) * u, 1e-15);  // the last layer's
  const MlpCase bf16(makeMlpProblem(DType::BF16, 4, {64, 96, 32}, false, Activation::None), FillMode::Random);
  const Verification bf16_result = bf16.verify(naiveMlp(bf16.problem, bf16.data, ReductionOrder::Forward));
  EXPECT_EQ(bf16_result.status, VerifyStatus::Passed) << bf16_result.detail;
  EXPECT_EQ(bf16_result.tolerance, f32_result.tolerance);
  const std::size_t layer_two = std::size_t(f32.problem.mlpOutputOffset(1));
  for (const MlpCase* test : {&f32, &bf16})
    for (std::size_t at = 0; at < layer_two; ++at) ASSERT_EQ(test->reference.carried[at], 0.0);
  // Y_1 rounded to bf16 (2^-8 of it) against f32's own rounding (2^-24): far more carried in.
  EXPECT_GT(bf16.reference.carried[layer_two], 1000 * f32.reference.carried[layer_two]);
  // The exact fill allows nothing in any layer.
  const MlpCase exact(makeMlpProblem(DType::F32, 4, {64, 96, 32}, false, Activation::None), FillMode::ExactInteger);
  EXPECT_EQ(exact.verify(naiveMlp(exact.problem, exact.data, ReductionOrder::Forward)).tolerance, 0.0);
}

// A deep bf16 mlp under the random fill: the carried bounds stay well short of
// the outputs, so zeros fail every layer, and a correct kernel passes.
TEST(MlpCompare, RandomFillOfADeepBf16MlpStillCatchesZeros) {
  const MlpCase test(makeMlpProblem(DType::BF16, 16, {512, 512, 512, 512, 512}, true, Activation::Relu),
                     FillMode::Random);
  const FloatBuffer good = naiveMlp(test.problem, test.data, ReductionOrder::Forward);
  const Verification result = test.verify(good);
  EXPECT_EQ(result.status, VerifyStatus::Passed) << result.detail;
  for (std::int64_t layer = 0; layer < test.problem.mlp.count(); ++layer) {
    FloatBuffer zeroed = good;
    const auto first = zeroed.begin() + test.problem.mlpOutputOffset(layer);
    std::fill(first, first + 16 * 512, 0.0f);
    const Verification zeros = test.verify(zeroed);
    EXPECT_EQ(zeros.status, VerifyStatus::Failed) << "layer " << layer + 1;
    EXPECT_NE(zeros.detail.find(fmt::format("layer {}'s Y", layer + 1)), std::string::npos) << zeros.detail;
  }
}

// A layer whose ReLU zeroes nearly everything cannot tell a kernel that wrote
// zeros there: the row is mistrusted, naming the layer.
TEST(MlpCompare, MistrustsALayerThatReluZeroesAlmostEntirely) {
  const Problem p = makeMlpProblem(DType::F32, 16, {64, 96, 32, 48}, true, Activation::Relu);
  ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  for (std::int64_t j = 0; j < 32; ++j) data.bias[std::size_t(p.mlp.biasOffset(1) + j)] = -1.0e6f;  // layer 2
  const ReferenceResult reference = referenceMlp(p, data);
  ASSERT_EQ(zeroFraction(layerValues(p, reference, 1)), 1.0);
  const std::optional<std::string> why = tooManyReferenceZeros(p, reference);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "100% of layer 2's Y reference outputs are zero after ReLU: a kernel that writes zeros there would pass");
  const Verification result = verifyResult(p, FillMode::ExactInteger, naiveMlp(p, data, ReductionOrder::Forward).data(),
                                           reference);
  EXPECT_EQ(result.status, VerifyStatus::Mistrusted);
  EXPECT_EQ(result.detail, *why);
  EXPECT_EQ(result.mismatches, 0);
}

// After ReLU up to 90% of a layer may be zero; without it, as for a gemm, up to half.
TEST(MlpCompare, ZeroLimitsPerLayerWithAndWithoutRelu) {
  // Layer 2's reference outputs: `fraction` of them zero, the others one.
  const auto zeroed = [](const MlpCase& test, double fraction) {
    ReferenceResult reference = test.reference;
    const auto first = reference.value.begin() + test.problem.mlpOutputOffset(1);
    const auto last = reference.value.begin() + test.problem.mlpOutputOffset(2);
    std::fill(first, last, 1.0);
    std::fill(first, first + static_cast<std::ptrdiff_t>(fraction * double(last - first)), 0.0);
    return reference;
  };
  const MlpCase relu(makeMlpProblem(DType::F32, 10, {64, 100, 100}, true, Activation::Relu), FillMode::ExactInteger);
  EXPECT_EQ(tooManyReferenceZeros(relu.problem, zeroed(relu, 0.85)), std::nullopt);
  const auto relu_why = tooManyReferenceZeros(relu.problem, zeroed(relu, 0.95));
  ASSERT_TRUE(relu_why.has_value());
  EXPECT_EQ(relu_why->rfind("95% of layer 2's Y", 0), 0u) << *relu_why;
  EXPECT_NE(relu_why->find("of layer 2's Y reference outputs are zero after ReLU"), std::string::npos) << *relu_why;

  const MlpCase plain(makeMlpProblem(DType::F32, 10, {64, 100, 100}, true, Activation::None), FillMode::ExactInteger);
  EXPECT_EQ(tooManyReferenceZeros(plain.problem, plain.reference), std::nullopt);
  EXPECT_EQ(tooManyReferenceZeros(plain.problem, zeroed(plain, 0.45)), std::nullopt);
  const auto plain_why = tooManyReferenceZeros(plain.problem, zeroed(plain, 0.6));
  ASSERT_TRUE(plain_why.has_value());
  EXPECT_NE(plain_why->find("of layer 2's Y reference outputs are zero: a kernel"), std::string::npos) << *plain_why;
  EXPECT_EQ(plain_why->find("ReLU"), std::string::npos) << *plain_why;
}

}  // namespace
}  // namespace nkbench
