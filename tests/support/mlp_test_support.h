// Shared by the mlp tests of every backend: data and its reference as the runner
// picks them, a run of a backend's mlp kernel the way the runner runs it, checked
// layer by layer against referenceMlp, and readable test names.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "kernels/backend.h"
#include "operands/bf16.h"
#include "operands/c_operand.h"
#include "reference/compare.h"
#include "operands/fill.h"
#include "reference/reference_mlp.h"
#include "tests/support/kernel_run.h"
#include "tests/support/test_problems.h"

namespace nkbench::test {

struct CheckableMlpData {
  ProblemData data;
  ReferenceResult reference;
};

// As the runner does: the first fixed seed whose reference is not mostly zero
// (ReLU can zero most of a small layer), so that a kernel writing nothing fails.
inline CheckableMlpData checkableMlpData(const Problem& problem, FillMode fill) {
  for (std::uint64_t seed = 1;; ++seed) {
    ProblemData data = makeProblemData(problem, fill, seed);
    ReferenceResult reference = referenceMlp(problem, data);
    if (!tooManyReferenceZeros(problem, reference) || seed == 8) return {std::move(data), std::move(reference)};
  }
}

// Runs an mlp the way the runner does: X, the weights and the biases in guarded
// memory (X and W as bf16 for a bf16 mlp), C (every layer's output) starting as
// NaN, computed twice (a layer must not read what it wrote the time before); then
// checks every layer against referenceMlp. A write into a canary slack fails the test.
inline RunOutcome runMlpAgainstReference(Backend& backend, const Problem& problem, FillMode fill) {
  const auto [data, reference] = checkableMlpData(problem, fill);
  COperand c(problem, data);
  const GuardedInput x(problem.dtype, data.a, "X"), w(problem.dtype, data.b, "W");
  const GuardedInput bias = problem.mlp.bias ? GuardedInput(DType::F32, data.bias, "bias") : GuardedInput();
  const Operands operands{x.data(), w.data(), c.data(), static_cast<const float*>(bias.data())};

  const std::unique_ptr<Kernel> kernel = backend.prepare(problem, operands);
  kernel->pack();
  kernel->compute();
  kernel->compute();
  kernel->finishCalls();
  kernel->unpack();
  for (const std::optional<std::string>& damage :
       {x.canaryDamage(), w.canaryDamage(), bias.canaryDamage(), c.canaryDamage()})
    if (damage) ADD_FAILURE() << backend.name() << " on " << problem.describe() << ": " << *damage;
  return {verifyResult(problem, fill, c.asFloat().data(), reference), kernel->info()};
}

// "bf16_48x64_96_32_80_bias_relu_exact": gtest allows letters, digits and '_' only.
inline std::string mlpCaseName(const Problem& problem, FillMode fill) {
  const std::string epilogue = problem.mlp.epilogueText();
  std::string name = fmt::format("{}_{}x{}_{}_{}", toString(problem.dtype), problem.m, problem.mlp.widthsText(),
                                 epilogue.empty() ? "plain" : epilogue, toString(fill));
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == '-' || c == '+'; }, '_');
  return name;
}

}  // namespace nkbench::test
