#include "reference/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"
#include "operands/bf16.h"
#include "reference/rounding_model.h"

namespace nkbench {
namespace {

constexpr int kReportedPoints = 5;

// More zeros than this in the reference and a kernel that writes nothing (or
// only zeros) cannot be told apart from a correct one.
constexpr double kMistrustZeroFraction = 0.5;

// A sum of n terms in fp32, in any order and with or without FMA, is within
// gamma_n * sum|terms| of the exact sum, gamma_n ~ n * u (Higham, Accuracy and
// Stability of Numerical Algorithms, 3.1). Here n = K*batch products plus
// C_init. That worst case grows past the result itself: uniform terms of both
// signs sum to about sqrt(n) of their magnitude, so from n ~ 10^4 on, all
// zeros or a dropped batch entry passed it. The tolerance is the smaller of it
// (with 4x room for its higher-order term) and the probabilistic bound
// lambda * sqrt(n) * u (rounding_model.h).
constexpr double kWorstCaseFactor = 4.0;

double randomTolerance(const Problem& problem) {
  const std::int64_t terms = problem.reductionLength() + 1;
  return std::min(kWorstCaseFactor * double(terms) * kFp32UnitRoundoff,
                  kProbabilisticLambda * sumErrorScale(terms));
}

// What one output must hold. Exact fill: the reference itself, or for a bf16 C
// the reference correctly rounded to bf16 (the f32 sum is exact, so one rounding
// of it is that). Random fill: the reference, within its own sum's tolerance
// and what earlier layers carry in.
struct Expected {
  double value;
  double allowed;  // |got - value| bound; 0 = bit for bit
};

Expected expectedPoint(const Problem& problem, FillMode mode, double ref, double magnitude, double carried,
                       double tolerance) {
  const bool bf16_c = problem.c_dtype == DType::BF16;
  if (mode == FillMode::ExactInteger) return {bf16_c ? double(toFloat(roundToBFloat16(ref))) : ref, 0.0};
  const double accumulation = tolerance * magnitude + kProbabilisticLambda * carried;
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
  std::int64_t terms = 0;  // products each output sums (K * batch)
};

// What one block's reference can tell apart.
struct BlockCounts {
  std::int64_t reference_zeros = 0;
  std::int64_t zeros_would_pass = 0;  // outputs where a kernel that wrote 0 would pass
};

// Checks one block into `result`.
BlockCounts checkBlock(const Problem& problem, FillMode mode, const float* got, const ReferenceResult& reference,
                       const OutputBlock& block, Verification& result, std::vector<std::string>& offending_points) {
  BlockCounts counts;
  for (std::int64_t index = 0; index < block.count; ++index) {
    const auto at = static_cast<std::size_t>(block.begin + index);
    const double ref = reference.value[at];
    const double carried = reference.carried.empty() ? 0.0 : reference.carried[at];
    const Expected expected = expectedPoint(problem, mode, ref, reference.magnitude[at], carried, block.tolerance);
    const double error = pointError(mode, got[at], expected.value, reference.magnitude[at]);
    if (ref == 0.0) ++counts.reference_zeros;
    if (pointPasses(0.0f, expected)) ++counts.zeros_would_pass;
    result.max_error = std::max(result.max_error, error);
    if (pointPasses(got[at], expected)) continue;
    ++result.mismatches;
    if (offending_points.size() < kReportedPoints)
      offending_points.push_back(fmt::format("{}[{},{}]={} vs {}", block.name, index / block.columns,
                                             index % block.columns, got[at], expected.value));
  }
  return counts;
}

// An mlp's layers, each with its own sum's tolerance (what earlier layers carry
// in is the reference's, output by output).
std::vector<OutputBlock> mlpBlocks(const Problem& problem, FillMode mode) {
  std::vector<OutputBlock> blocks;
  for (std::int64_t layer = 0; layer < problem.mlp.count(); ++layer) {
    const Problem gemm = problem.mlpLayer(layer);
    blocks.push_back({problem.mlpOutputOffset(layer), gemm.cElements(), gemm.n,
                      mode == FillMode::ExactInteger ? 0.0 : randomTolerance(gemm),
                      fmt::format("layer {}'s Y", layer + 1), gemm.reductionLength()});
  }
  return blocks;
}

std::vector<OutputBlock> outputBlocks(const Problem& problem, FillMode mode) {
  if (problem.kind == OpKind::Mlp) return mlpBlocks(problem, mode);
  return {{0, problem.cElements(), problem.n, mode == FillMode::ExactInteger ? 0.0 : randomTolerance(problem), "C",
           problem.reductionLength()}};
}

// Above this fraction of zeros after ReLU, which zeroes about half of a layer's
// outputs by design, a kernel that writes zeros there would pass.
constexpr double kMistrustReluZeroFraction = 0.9;

double mistrustLimit(const Problem& problem) {
  const bool relu = problem.kind == OpKind::Mlp && problem.mlp.activation == Activation::Relu;
  return relu ? kMistrustReluZeroFraction : kMistrustZeroFraction;
}

double fractionOf(std::int64_t part, std::int64_t whole) { return double(part) / double(std::max<std::int64_t>(whole, 1)); }

}  // namespace

std::optional<std::string> tooManyReferenceZeros(const Problem& problem, const ReferenceResult& reference) {
  const bool relu = problem.kind == OpKind::Mlp && problem.mlp.activation == Activation::Relu;
  for (const OutputBlock& block : outputBlocks(problem, FillMode::ExactInteger)) {
    const auto first = reference.value.begin() + block.begin;
    const double zeros = fractionOf(std::count(first, first + block.count, 0.0), block.count);
    if (zeros <= mistrustLimit(problem)) continue;
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
  if (std::int64_t(reference.value.size()) != count || std::int64_t(reference.magnitude.size()) != count ||
      (!reference.carried.empty() && std::int64_t(reference.carried.size()) != count))
    throw Error(fmt::format("verify {}: the reference has {} outputs, expected {}", problem.describe(),
                            reference.value.size(), count));

  Verification result;
  std::int64_t reference_zeros = 0;
  std::vector<std::string> offending_points;
  std::optional<std::string> too_loose;  // random fill: where the tolerance admits zeros
  for (const OutputBlock& block : outputBlocks(problem, mode)) {
    result.tolerance = block.tolerance;
    const BlockCounts counts = checkBlock(problem, mode, got, reference, block, result, offending_points);
    reference_zeros += counts.reference_zeros;
    const double admitted = fractionOf(counts.zeros_would_pass, block.count);
    if (mode == FillMode::Random && !too_loose && admitted > mistrustLimit(problem))
      too_loose = fmt::format("{:.0f}% of {} outputs are within --fill random's tolerance of zero, as sums of "
                              "{} terms: a kernel that writes zeros there would pass (--fill exact checks bits)",
                              100.0 * admitted, block.name, block.terms);
  }
  result.reference_zero_fraction = fractionOf(reference_zeros, count);

  if (result.mismatches > 0) {
    result.status = VerifyStatus::Failed;
    result.detail = fmt::format("{} of {} outputs wrong (got vs reference): {}", result.mismatches,
                                count, fmt::join(offending_points, ", "));
  } else if (auto zeros = tooManyReferenceZeros(problem, reference)) {
    result.status = VerifyStatus::Mistrusted;
    result.detail = *zeros;
  } else if (too_loose) {
    result.status = VerifyStatus::Mistrusted;
    result.detail = *too_loose;
  } else {
    result.status = VerifyStatus::Passed;
  }
  return result;
}

}  // namespace nkbench
