// libxsmm's mlp route (kernels/libxsmm/libxsmm_mlp.h) against the per-layer reference:
// every layer's output in C, bit for bit under the exact fill and within the
// tolerance under the random one; f32 and bf16, with and without the bias, ReLU
// or none, widths off every vector multiple, 1 and 2 threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tests/backends/baseline_test_support.h"
#include "tests/support/mlp_test_support.h"

namespace nkbench::test {
namespace {

struct LibxsmmMlpCase {
  Problem problem;
  FillMode fill;
  int threads;
};

void PrintTo(const LibxsmmMlpCase& param, std::ostream* out) {
  *out << param.problem.describe() << ", " << toString(param.fill) << " fill, " << param.threads << " thread(s)";
}

std::string libxsmmMlpCaseName(const testing::TestParamInfo<LibxsmmMlpCase>& info) {
  return fmt::format("{}_t{}", mlpCaseName(info.param.problem, info.param.fill), info.param.threads);
}

std::vector<LibxsmmMlpCase> allCases() {
  std::vector<Problem> problems;
  for (DType dtype : {DType::F32, DType::BF16}) {
    // Widths off every vector multiple (padded blocks), a layer that narrows then widens, every epilogue.
    problems.push_back(makeMlpProblem(dtype, 48, {64, 96, 32, 80}, true, Activation::Relu));
    problems.push_back(makeMlpProblem(dtype, 17, {33, 45, 19}, false, Activation::None));
    problems.push_back(makeMlpProblem(dtype, 9, {40, 24, 56}, false, Activation::Relu));
    problems.push_back(makeMlpProblem(dtype, 70, {33, 45, 19, 7}, true, Activation::None));
    // Several row and column blocks of 64, and a layer with another K-block count (its own kernel).
    problems.push_back(makeMlpProblem(dtype, 130, {200, 128, 70}, true, Activation::Relu));
  }
  std::vector<LibxsmmMlpCase> cases;
  for (const Problem& problem : problems)
    for (FillMode fill : {FillMode::ExactInteger, FillMode::Random})
      for (int threads : {1, 2}) cases.push_back({problem, fill, threads});
  return cases;
}

// libxsmm 1.17 generates its bf16 BRGEMM (and its element-wise kernels) for
// AVX-512 targets only: an AVX2 host skips bf16; f32 must run wherever libxsmm is built.
bool mustRun(const Problem& problem) {
  return libraryBuiltIn("libxsmm") && (problem.dtype == DType::F32 || detectCpuFeatures().has(Isa::Avx512));
}

class LibxsmmMlpMatchesReference : public testing::TestWithParam<LibxsmmMlpCase> {};

TEST_P(LibxsmmMlpMatchesReference, EveryLayer) {
  const LibxsmmMlpCase& param = GetParam();
  const Problem& problem = param.problem;
  const std::unique_ptr<Backend> backend = makeBaseline("libxsmm", hostConfig(bestHostIsa(), param.threads));
  ASSERT_NE(backend, nullptr);
  if (const auto reason = backend->unsupportedReason(problem)) {
    if (mustRun(problem)) FAIL() << "unexpectedly unsupported: " << *reason;
    GTEST_SKIP() << *reason;
  }

  const auto [verification, info] = runMlpAgainstReference(*backend, problem, param.fill);
  EXPECT_EQ(verification.status, VerifyStatus::Passed)
      << toString(verification.status) << ": " << verification.detail << " [" << info.implementation << "]";
  EXPECT_EQ(verification.mismatches, 0);
  if (param.fill == FillMode::ExactInteger) {
    EXPECT_EQ(verification.max_error, 0.0);
  }

  // What ran says which steps are libxsmm's element-wise kernels and which the harness's loop:
  // 1.17 has meltw kernels (bias add, bf16 convert with ReLU fused) on AVX-512 targets, none on AVX2
  // and no f32 ReLU anywhere.
  const std::string& what = info.implementation;
  EXPECT_NE(what.find(problem.dtype == DType::BF16 ? "libxsmm bf16 brgemm (" : "libxsmm brgemm ("), std::string::npos)
      << what;
  EXPECT_NE(what.find(" block"), std::string::npos) << what;
  EXPECT_EQ(what.find("relu") != std::string::npos, problem.mlp.activation == Activation::Relu) << what;
  EXPECT_EQ(what.find("bias") != std::string::npos, problem.mlp.bias) << what;
  EXPECT_FALSE(info.isa_used.empty()) << what;
  const bool avx512_target = info.isa_used != "avx2";
  if (problem.mlp.bias) {
    EXPECT_EQ(what.find("meltw bias add") != std::string::npos, avx512_target) << what;
  }
  if (problem.dtype == DType::F32 && problem.mlp.activation == Activation::Relu) {
    EXPECT_NE(what.find("relu in the harness's loop"), std::string::npos) << what;
  }
  if (problem.dtype == DType::BF16) {
    EXPECT_NE(what.find(problem.mlp.activation == Activation::Relu ? "meltw relu+bf16 convert" : "meltw bf16 convert"),
              std::string::npos)
        << what;
    EXPECT_NE(info.packing.find("VNNI"), std::string::npos) << info.packing;
  }
}

INSTANTIATE_TEST_SUITE_P(LibxsmmMlp, LibxsmmMlpMatchesReference, testing::ValuesIn(allCases()), libxsmmMlpCaseName);

TEST(LibxsmmMlp, SkipsWhatItCannotRun) {
  const std::unique_ptr<Backend> backend = makeBaseline("libxsmm", hostConfig(bestHostIsa()));
  ASSERT_NE(backend, nullptr);
  if (!libraryBuiltIn("libxsmm")) GTEST_SKIP() << "libxsmm was not built in";
  Problem f32_with_bf16_outputs = makeMlpProblem(DType::F32, 8, {16, 16}, true, Activation::Relu);
  f32_with_bf16_outputs.c_dtype = DType::BF16;
  EXPECT_TRUE(backend->unsupportedReason(f32_with_bf16_outputs).has_value());
  Problem bf16_with_f32_outputs = makeMlpProblem(DType::BF16, 8, {16, 16}, true, Activation::Relu);
  bf16_with_f32_outputs.c_dtype = DType::F32;
  EXPECT_TRUE(backend->unsupportedReason(bf16_with_f32_outputs).has_value());
  EXPECT_FALSE(backend->unsupportedReason(makeMlpProblem(DType::F32, 8, {16, 16}, true, Activation::Relu)).has_value());
}

}  // namespace
}  // namespace nkbench::test
