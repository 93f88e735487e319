// The mlp kind on Eigen, its reference route: every layer must match the per-layer reference.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "harness/host/omp_threads.h"
#include "harness/host/pinning.h"
#include "tests/backends/baseline_test_support.h"
#include "tests/support/mlp_test_support.h"

namespace nkbench::test {
namespace {

std::vector<Problem> mlpShapes(DType dtype) {
  return {makeMlpProblem(dtype, 16, {64, 96, 32}, true, Activation::Relu),
          makeMlpProblem(dtype, 7, {33, 17, 65, 5}, true, Activation::None),
          makeMlpProblem(dtype, 1, {5, 3}, false, Activation::Relu),
          makeMlpProblem(dtype, 32, {256, 256, 256, 256}, false, Activation::None),
          makeMlpProblem(dtype, 64, {1024, 1024, 1024}, true, Activation::Relu)};
}

TEST(EigenMlp, EveryLayerMatchesTheReference) {
  const std::unique_ptr<Backend> eigen = makeEigenBackend(hostConfig(bestHostIsa()));
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Problem& problem : mlpShapes(dtype))
      for (FillMode mode : {FillMode::ExactInteger, FillMode::Random}) {
        SCOPED_TRACE(problem.describe() + ", " + std::string(toString(mode)));
        ASSERT_EQ(eigen->unsupportedReason(problem), std::nullopt);
        const RunOutcome outcome = runMlpAgainstReference(*eigen, problem, mode);
        EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
        if (mode == FillMode::ExactInteger) {
          EXPECT_EQ(outcome.verification.max_error, 0.0);
        }
      }
}

TEST(EigenMlp, SaysWhatItRan) {
  const std::unique_ptr<Backend> eigen = makeEigenBackend(hostConfig(bestHostIsa()));
  const RunOutcome f32 = runMlpAgainstReference(*eigen, makeMlpProblem(DType::F32, 4, {8, 8}, true, Activation::Relu),
                                                FillMode::ExactInteger);
  EXPECT_NE(f32.info.implementation.find("Eigen products per layer, bias+relu"), std::string::npos)
      << f32.info.implementation;
  const RunOutcome plain = runMlpAgainstReference(
      *eigen, makeMlpProblem(DType::F32, 4, {8, 8}, false, Activation::None), FillMode::ExactInteger);
  EXPECT_NE(plain.info.implementation.find("no epilogue"), std::string::npos) << plain.info.implementation;
  const RunOutcome bf16 = runMlpAgainstReference(
      *eigen, makeMlpProblem(DType::BF16, 4, {8, 8, 8}, false, Activation::Relu), FillMode::ExactInteger);
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
    const Problem problem = makeMlpProblem(dtype, 256, {512, 384, 256}, true, Activation::Relu);
    ASSERT_EQ(eigen->unsupportedReason(problem), std::nullopt);
    const RunOutcome outcome = runMlpAgainstReference(*eigen, problem, FillMode::ExactInteger);
    EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
  }
}

}  // namespace
}  // namespace nkbench::test
