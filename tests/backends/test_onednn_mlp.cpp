// oneDNN's mlp route (kernels/onednn/onednn_mlp.h) against the per-layer reference:
// every layer's output in C, bit for bit under the exact fill and within the
// tolerance under the random one, with and without the bias and ReLU, f32 and bf16.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tests/backends/baseline_test_support.h"
#include "tests/support/mlp_test_support.h"

namespace nkbench::test {
namespace {

struct MlpCase {
  std::string backend;
  Problem problem;
  FillMode fill;
};

void PrintTo(const MlpCase& param, std::ostream* out) {
  *out << param.backend << ": " << param.problem.describe() << ", " << toString(param.fill) << " fill";
}

std::string onednnMlpCaseName(const testing::TestParamInfo<MlpCase>& info) {
  std::string backend = info.param.backend;
  std::replace(backend.begin(), backend.end(), '-', '_');
  return fmt::format("{}_{}", backend, mlpCaseName(info.param.problem, info.param.fill));
}

std::vector<MlpCase> allCases() {
  std::vector<Problem> problems;
  for (DType dtype : {DType::F32, DType::BF16}) {
    // Widths off every vector multiple, and a layer that narrows then widens.
    problems.push_back(makeMlpProblem(dtype, 48, {64, 96, 32, 80}, true, Activation::Relu));
    problems.push_back(makeMlpProblem(dtype, 17, {33, 45, 19}, false, Activation::None));
    problems.push_back(makeMlpProblem(dtype, 9, {40, 24, 56}, false, Activation::Relu));
  }
  std::vector<MlpCase> cases;
  for (const char* backend : {"onednn", "onednn-packed"})
    for (const Problem& problem : problems)
      for (FillMode fill : {FillMode::ExactInteger, FillMode::Random}) cases.push_back({backend, problem, fill});
  return cases;
}

class OnednnMlpMatchesReference : public testing::TestWithParam<MlpCase> {};

TEST_P(OnednnMlpMatchesReference, EveryLayer) {
  const MlpCase& param = GetParam();
  const Problem& problem = param.problem;
  const std::unique_ptr<Backend> backend = makeBaseline(param.backend, hostConfig(bestHostIsa()));
  ASSERT_NE(backend, nullptr);
  if (const auto reason = backend->unsupportedReason(problem)) {
    // bf16 needs AVX-512 (BF16) in oneDNN: an AVX2 host skips it; f32 must run wherever oneDNN is built.
    const bool must_run = libraryBuiltIn(param.backend) &&
                          (problem.dtype == DType::F32 || detectCpuFeatures().has(Isa::Avx512Bf16));
    if (must_run) FAIL() << "unexpectedly unsupported: " << *reason;
    GTEST_SKIP() << *reason;
  }

  const auto [verification, info] = runMlpAgainstReference(*backend, problem, param.fill);
  EXPECT_EQ(verification.status, VerifyStatus::Passed)
      << toString(verification.status) << ": " << verification.detail << " [" << info.implementation << "]";
  EXPECT_EQ(verification.mismatches, 0);
  EXPECT_NE(info.implementation.find(" per layer"), std::string::npos) << info.implementation;
  EXPECT_EQ(info.implementation.find("relu") != std::string::npos, problem.mlp.activation == Activation::Relu)
      << info.implementation;
  EXPECT_FALSE(info.isa_used.empty()) << info.implementation;
}

INSTANTIATE_TEST_SUITE_P(OnednnMlp, OnednnMlpMatchesReference, testing::ValuesIn(allCases()), onednnMlpCaseName);

}  // namespace
}  // namespace nkbench::test
