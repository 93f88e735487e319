// oneDNN's mlp route (kernels/onednn/onednn_mlp.h) against the per-layer reference:
// every layer's output in C, bit for bit under the exact fill and within the
// tolerance under the random one, with and without the bias and ReLU, f32 and bf16.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "reference/reference_mlp.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench::test {
namespace {

Problem mlp(DType dtype, std::int64_t rows, std::vector<std::int64_t> widths, bool bias, Activation activation) {
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

struct MlpCase {
  std::string backend;
  Problem problem;
  FillMode fill;
};

void PrintTo(const MlpCase& param, std::ostream* out) {
  *out << param.backend << ": " << param.problem.describe() << ", " << toString(param.fill) << " fill";
}

std::string mlpCaseName(const testing::TestParamInfo<MlpCase>& info) {
  const Problem& p = info.param.problem;
  const std::string epilogue = p.mlp.epilogueText();
  std::string name = fmt::format("{}_{}_{}x{}_{}_{}", info.param.backend, toString(p.dtype), p.m, p.mlp.widthsText(),
                                 epilogue.empty() ? "plain" : epilogue, toString(info.param.fill));
  for (char& c : name)
    if (c == '-' || c == '+') c = '_';
  return name;
}

std::vector<MlpCase> allCases() {
  std::vector<Problem> problems;
  for (DType dtype : {DType::F32, DType::BF16}) {
    // Widths off every vector multiple, and a layer that narrows then widens.
    problems.push_back(mlp(dtype, 48, {64, 96, 32, 80}, true, Activation::Relu));
    problems.push_back(mlp(dtype, 17, {33, 45, 19}, false, Activation::None));
    problems.push_back(mlp(dtype, 9, {40, 24, 56}, false, Activation::Relu));
  }
  std::vector<MlpCase> cases;
  for (const char* backend : {"onednn", "onednn-packed"})
    for (const Problem& problem : problems)
      for (FillMode fill : {FillMode::ExactInteger, FillMode::Random}) cases.push_back({backend, problem, fill});
  return cases;
}

// As the runner does: the first fixed seed whose reference is not mostly zero
// (ReLU can zero most of a small layer), so that a kernel writing nothing fails.
struct CheckableData {
  ProblemData data;
  ReferenceResult reference;
};
CheckableData checkableData(const Problem& problem, FillMode fill) {
  for (std::uint64_t seed = 1;; ++seed) {
    ProblemData data = makeProblemData(problem, fill, seed);
    ReferenceResult reference = referenceMlp(problem, data);
    if (!tooManyReferenceZeros(problem, reference) || seed == 8) return {std::move(data), std::move(reference)};
  }
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

  const auto [data, reference] = checkableData(problem, param.fill);
  COperand c(problem, data);  // NaN: an output no layer writes cannot pass
  GuardedBuffer<float> a_f32, b_f32;
  GuardedBuffer<BFloat16> a_bf16, b_bf16;
  const GuardedBuffer<float> bias(std::span<const float>(data.bias), {"bias"});
  Operands operands{nullptr, nullptr, c.data(), problem.mlp.bias ? bias.data() : nullptr};
  if (problem.dtype == DType::BF16) {
    a_bf16 = GuardedBuffer<BFloat16>(std::span<const BFloat16>(exactBf16(data.a)), {"X"});
    b_bf16 = GuardedBuffer<BFloat16>(std::span<const BFloat16>(exactBf16(data.b)), {"W"});
    operands.a = a_bf16.data();
    operands.b = b_bf16.data();
  } else {
    a_f32 = GuardedBuffer<float>(std::span<const float>(data.a), {"X"});
    b_f32 = GuardedBuffer<float>(std::span<const float>(data.b), {"W"});
    operands.a = a_f32.data();
    operands.b = b_f32.data();
  }

  const std::unique_ptr<Kernel> kernel = backend->prepare(problem, operands);
  kernel->pack();
  kernel->compute();
  kernel->compute();  // the runner repeats it: a layer must not read what it wrote last time
  kernel->finishCalls();
  kernel->unpack();
  for (const std::optional<std::string>& damage : {a_f32.canaryDamage(), b_f32.canaryDamage(), a_bf16.canaryDamage(),
                                                   b_bf16.canaryDamage(), bias.canaryDamage(), c.canaryDamage()})
    if (damage) ADD_FAILURE() << *damage;

  const KernelInfo& info = kernel->info();
  const Verification verification = verifyResult(problem, param.fill, c.asFloat().data(), reference);
  EXPECT_EQ(verification.status, VerifyStatus::Passed)
      << toString(verification.status) << ": " << verification.detail << " [" << info.implementation << "]";
  EXPECT_EQ(verification.mismatches, 0);
  EXPECT_NE(info.implementation.find(" per layer"), std::string::npos) << info.implementation;
  EXPECT_EQ(info.implementation.find("relu") != std::string::npos, problem.mlp.activation == Activation::Relu)
      << info.implementation;
  EXPECT_FALSE(info.isa_used.empty()) << info.implementation;
}

INSTANTIATE_TEST_SUITE_P(OnednnMlp, OnednnMlpMatchesReference, testing::ValuesIn(allCases()), mlpCaseName);

}  // namespace
}  // namespace nkbench::test
