#include "reference/compare.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"
#include "reference/bf16.h"

namespace nkbench {
namespace {

constexpr int kReportedPoints = 5;

// More zeros than this in the reference and a kernel that writes nothing (or
// only zeros) cannot be told apart from a correct one.
constexpr double kMistrustZeroFraction = 0.5;

// A sum of n terms in fp32, in any order and with or without FMA, is within
// gamma_n * sum|terms| of the exact sum, gamma_n ~ n * FLT_EPSILON / 2
// (Higham, Accuracy and Stability of Numerical Algorithms, 3.1). Here
// n = K*batch products plus C_init. The tolerance below, 2 * n * FLT_EPSILON,
// is 4x that first-order bound: room for the higher-order term, so a
// correct kernel never fails, while a wrong or dropped term still shows.
constexpr double kToleranceFactor = 2.0;

double randomTolerance(const Problem& problem) {
  return kToleranceFactor * double(problem.reductionLength() + 1) * double(FLT_EPSILON);
}

// Rounding the f32 sum to a bf16 C moves it by at most half a bf16 ulp: 2^-8 of it.
constexpr double kBf16HalfUlp = 0x1p-8;

// What one output must hold. Exact fill: the reference itself, or for a bf16 C
// the reference correctly rounded to bf16 (the f32 sum is exact, so one rounding
// of it is that). Random fill: the reference, within `allowed`.
struct Expected {
  double value;
  double allowed;  // |got - value| bound; 0 = bit for bit
};

Expected expectedPoint(const Problem& problem, FillMode mode, double ref, double magnitude, double tolerance) {
  const bool bf16_c = problem.c_dtype == DType::BF16;
  if (mode == FillMode::ExactInteger) return {bf16_c ? double(toFloat(roundToBFloat16(ref))) : ref, 0.0};
  const double accumulation = tolerance * magnitude;
  return {ref, accumulation + (bf16_c ? kBf16HalfUlp * (std::abs(ref) + accumulation) : 0.0)};
}

// Error of one output: absolute for exact fill, normalised by the sum of
// absolute terms for random fill. Non-finite results get infinity.
double pointError(FillMode mode, float got, double expected, double magnitude) {
  if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
  const double difference = std::abs(double(got) - expected);
  if (mode == FillMode::ExactInteger) return difference;
  return difference / std::max(magnitude, double(std::numeric_limits<float>::min()));
}

bool pointPasses(float got, const Expected& expected) {
  if (!std::isfinite(got)) return false;
  if (expected.allowed == 0.0) return double(got) == expected.value;
  return std::abs(double(got) - expected.value) <= expected.allowed;
}

}  // namespace

std::string_view toString(VerifyStatus status) {
  switch (status) {
    case VerifyStatus::Passed: return "passed";
    case VerifyStatus::Failed: return "failed";
    case VerifyStatus::Mistrusted: return "mistrusted";
    case VerifyStatus::Skipped: return "skipped";
    case VerifyStatus::Error: return "error";
  }
  return "?";
}

std::optional<VerifyStatus> parseVerifyStatus(std::string_view text) {
  for (VerifyStatus status : {VerifyStatus::Passed, VerifyStatus::Failed, VerifyStatus::Mistrusted,
                              VerifyStatus::Skipped, VerifyStatus::Error})
    if (toString(status) == text) return status;
  return std::nullopt;
}

namespace {

// Outputs checked as one block: all of C, or one layer's output of an mlp.
struct OutputBlock {
  std::int64_t begin = 0, count = 0, columns = 1;
  double tolerance = 0.0;  // random fill: relative to the magnitude
  std::string name;        // "C", "layer 2's Y"
};

// Checks one block into `result`; returns its reference zeros.
std::int64_t checkBlock(const Problem& problem, FillMode mode, const float* got, const ReferenceResult& reference,
                        const OutputBlock& block, Verification& result, std::vector<std::string>& offending_points) {
  std::int64_t reference_zeros = 0;
  for (std::int64_t index = 0; index < block.count; ++index) {
    const auto at = static_cast<std::size_t>(block.begin + index);
    const double ref = reference.value[at];
    const Expected expected = expectedPoint(problem, mode, ref, reference.magnitude[at], block.tolerance);
    const double error = pointError(mode, got[at], expected.value, reference.magnitude[at]);
    if (ref == 0.0) ++reference_zeros;
    result.max_error = std::max(result.max_error, error);
    if (pointPasses(got[at], expected)) continue;
    ++result.mismatches;
    if (offending_points.size() < kReportedPoints)
      offending_points.push_back(fmt::format("{}[{},{}]={} vs {}", block.name, index / block.columns,
                                             index % block.columns, got[at], expected.value));
  }
  return reference_zeros;
}

// An mlp's layers, each with its tolerance: its own sum's, plus what earlier
// layers' sums and bf16 roundings carry in (relative to the propagated magnitude).
std::vector<OutputBlock> mlpBlocks(const Problem& problem, FillMode mode) {
  std::vector<OutputBlock> blocks;
  double carried = 0.0;
  for (std::int64_t layer = 0; layer < problem.mlp.count(); ++layer) {
    const Problem gemm = problem.mlpLayer(layer);
    const double own = mode == FillMode::ExactInteger ? 0.0 : randomTolerance(gemm);
    blocks.push_back({problem.mlpOutputOffset(layer), gemm.cElements(), gemm.n, carried + own,
                      fmt::format("layer {}'s Y", layer + 1)});
    carried += own + (problem.c_dtype == DType::BF16 ? 2 * kBf16HalfUlp : 0.0);
  }
  return blocks;
}

std::vector<OutputBlock> outputBlocks(const Problem& problem, FillMode mode) {
  if (problem.kind == OpKind::Mlp) return mlpBlocks(problem, mode);
  return {{0, problem.cElements(), problem.n, mode == FillMode::ExactInteger ? 0.0 : randomTolerance(problem), "C"}};
}

// Above this fraction of zeros after ReLU, which zeroes about half of a layer's
// outputs by design, a kernel that writes zeros there would pass.
constexpr double kMistrustReluZeroFraction = 0.9;

}  // namespace

std::optional<std::string> tooManyReferenceZeros(const Problem& problem, const ReferenceResult& reference) {
  const bool relu = problem.kind == OpKind::Mlp && problem.mlp.activation == Activation::Relu;
  const double limit = relu ? kMistrustReluZeroFraction : kMistrustZeroFraction;
  for (const OutputBlock& block : outputBlocks(problem, FillMode::ExactInteger)) {
    const auto first = reference.value.begin() + block.begin;
    const double zeros = double(std::count(first, first + block.count, 0.0)) / double(std::max<std::int64_t>(block.count, 1));
    if (zeros <= limit) continue;
    if (problem.kind != OpKind::Mlp)
      return fmt::format("{:.0f}% of the reference outputs are zero: a kernel that writes nothing would pass",
                         100.0 * zeros);
    return fmt::format("{:.0f}% of {} reference outputs are zero{}: a kernel that writes zeros there would pass",
                       100.0 * zeros, block.name, relu ? " after ReLU" : "");
  }
  return std::nullopt;
}

Verification verifyResult(const Problem& problem, FillMode mode, const float* got,
                          const ReferenceResult& reference) {
  const std::int64_t count = problem.cElements();
  if (std::int64_t(reference.value.size()) != count || std::int64_t(reference.magnitude.size()) != count)
    throw Error(fmt::format("verify {}: the reference has {} outputs, expected {}", problem.describe(),
                            reference.value.size(), count));

  Verification result;
  std::int64_t reference_zeros = 0;
  std::vector<std::string> offending_points;
  for (const OutputBlock& block : outputBlocks(problem, mode)) {
    result.tolerance = block.tolerance;
    reference_zeros += checkBlock(problem, mode, got, reference, block, result, offending_points);
  }
  result.reference_zero_fraction = count > 0 ? double(reference_zeros) / double(count) : 0.0;

  if (result.mismatches > 0) {
    result.status = VerifyStatus::Failed;
    result.detail = fmt::format("{} of {} outputs wrong (got vs reference): {}", result.mismatches,
                                count, fmt::join(offending_points, ", "));
  } else if (auto zeros = tooManyReferenceZeros(problem, reference)) {
    result.status = VerifyStatus::Mistrusted;
    result.detail = *zeros;
  } else {
    result.status = VerifyStatus::Passed;
  }
  return result;
}

}  // namespace nkbench
