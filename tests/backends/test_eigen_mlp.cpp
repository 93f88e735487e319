// The mlp kind on Eigen, its reference route: every layer must match the per-layer reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "harness/host/omp_threads.h"
#include "harness/host/pinning.h"
#include "reference/reference_mlp.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench::test {
namespace {

Problem mlp(std::int64_t rows, std::vector<std::int64_t> widths, bool bias, Activation activation,
            DType dtype = DType::F32) {
  Problem p;
  p.kind = OpKind::Mlp;
  p.dtype = dtype;
  p.c_dtype = dtype;
  p.m = rows;
  p.k = widths.front();
  p.n = widths.back();
  p.mlp = {std::move(widths), bias, activation};
  return p;
}

// Runs an mlp the way the runner does: X, the weights and the biases in guarded
// memory (X and W as bf16 for a bf16 mlp), C (every layer's output) starting as
// NaN, computed twice; then checks every layer against referenceMlp.
RunOutcome runMlp(Backend& backend, const Problem& problem, FillMode mode) {
  const ProblemData data = makeProblemData(problem, mode);
  COperand c(problem, data);
  GuardedBuffer<float> x_f32, w_f32, bias;
  GuardedBuffer<BFloat16> x_bf16, w_bf16;
  Operands operands{nullptr, nullptr, c.data(), nullptr};
  if (problem.dtype == DType::BF16) {
    x_bf16 = GuardedBuffer<BFloat16>(std::span<const BFloat16>(exactBf16(data.a)), {"A"});
    w_bf16 = GuardedBuffer<BFloat16>(std::span<const BFloat16>(exactBf16(data.b)), {"B"});
    operands.a = x_bf16.data();
    operands.b = w_bf16.data();
  } else {
    x_f32 = GuardedBuffer<float>(std::span<const float>(data.a), {"A"});
    w_f32 = GuardedBuffer<float>(std::span<const float>(data.b), {"B"});
    operands.a = x_f32.data();
    operands.b = w_f32.data();
  }
  if (problem.mlp.bias) {
    bias = GuardedBuffer<float>(std::span<const float>(data.bias), {"bias"});
    operands.bias = bias.data();
  }
  const std::unique_ptr<Kernel> kernel = backend.prepare(problem, operands);
  kernel->pack();
  kernel->compute();
  kernel->compute();
  kernel->finishCalls();
  kernel->unpack();
  for (const std::optional<std::string>& damage : {x_f32.canaryDamage(), w_f32.canaryDamage(), bias.canaryDamage(),
                                                   x_bf16.canaryDamage(), w_bf16.canaryDamage(), c.canaryDamage()})
    if (damage) ADD_FAILURE() << backend.name() << " on " << problem.describe() << ": " << *damage;
  return {verifyResult(problem, mode, c.asFloat().data(), referenceMlp(problem, data)), kernel->info()};
}

std::vector<Problem> mlpShapes(DType dtype) {
  return {mlp(16, {64, 96, 32}, true, Activation::Relu, dtype),
          mlp(7, {33, 17, 65, 5}, true, Activation::None, dtype),
          mlp(1, {5, 3}, false, Activation::Relu, dtype),
          mlp(32, {256, 256, 256, 256}, false, Activation::None, dtype),
          mlp(64, {1024, 1024, 1024}, true, Activation::Relu, dtype)};
}

TEST(EigenMlp, EveryLayerMatchesTheReference) {
  const std::unique_ptr<Backend> eigen = makeEigenBackend(hostConfig(bestHostIsa()));
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Problem& problem : mlpShapes(dtype))
      for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
        SCOPED_TRACE(problem.describe() + ", " + std::string(toString(mode)));
        ASSERT_EQ(eigen->unsupportedReason(problem), std::nullopt);
        const RunOutcome outcome = runMlp(*eigen, problem, mode);
        EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
        if (mode == FillMode::ExactInteger) EXPECT_EQ(outcome.verification.max_error, 0.0);
      }
}

TEST(EigenMlp, SaysWhatItRan) {
  const std::unique_ptr<Backend> eigen = makeEigenBackend(hostConfig(bestHostIsa()));
  const RunOutcome f32 = runMlp(*eigen, mlp(4, {8, 8}, true, Activation::Relu), FillMode::ExactInteger);
  EXPECT_NE(f32.info.implementation.find("Eigen products per layer, bias+relu"), std::string::npos)
      << f32.info.implementation;
  const RunOutcome plain = runMlp(*eigen, mlp(4, {8, 8}, false, Activation::None), FillMode::ExactInteger);
  EXPECT_NE(plain.info.implementation.find("no epilogue"), std::string::npos) << plain.info.implementation;
  const RunOutcome bf16 =
      runMlp(*eigen, mlp(4, {8, 8, 8}, false, Activation::Relu, DType::BF16), FillMode::ExactInteger);
  EXPECT_NE(bf16.info.implementation.find("each layer's output rounded to bf16"), std::string::npos)
      << bf16.info.implementation;
  EXPECT_EQ(bf16.info.packing, "X,W bf16 -> f32");
}

// Eigen splits each layer's product among the threads.
TEST(EigenMlp, RunsOnTwoThreads) {
  if (usableCores().size() < 2) GTEST_SKIP() << "one core";
  placeOpenMpThreads(coresForThreads(2));
  const std::unique_ptr<Backend> eigen = makeEigenBackend(hostConfig(bestHostIsa(), 2));
  for (DType dtype : {DType::F32, DType::BF16}) {
    const Problem problem = mlp(256, {512, 384, 256}, true, Activation::Relu, dtype);
    ASSERT_EQ(eigen->unsupportedReason(problem), std::nullopt);
    const RunOutcome outcome = runMlp(*eigen, problem, FillMode::ExactInteger);
    EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
  }
}

}  // namespace
}  // namespace nkbench::test
