// Shared by the baseline backend tests: creating a baseline by name and running
// one problem through it against the reference.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/isa.h"
#include "kernels/backend.h"
#include "kernels/eigen/eigen_backend.h"
#include "kernels/libxsmm/libxsmm_backend.h"
#include "kernels/onednn/onednn_backend.h"
#include "operands/bf16.h"
#include "operands/c_operand.h"
#include "reference/compare.h"
#include "operands/fill.h"
#include "reference/reference_gemm.h"
#include "tests/support/kernel_run.h"
#include "tests/support/test_problems.h"

namespace nkbench::test {

inline std::unique_ptr<Backend> makeBaseline(const std::string& name, const BackendConfig& config) {
  if (name == "eigen") return makeEigenBackend(config);
  if (name == "libxsmm") return makeLibxsmmBackend(config);
  if (name == "onednn") return makeOnednnBackend(config, false);
  if (name == "onednn-packed") return makeOnednnBackend(config, true);
  ADD_FAILURE() << "unknown baseline " << name;
  return nullptr;
}

// Whether CMake found the library behind a baseline, so that "unsupported" is a
// failure rather than a skip.
inline bool libraryBuiltIn(const std::string& name) {
  if (name == "libxsmm") {
#if defined(NKBENCH_EXPECT_LIBXSMM)
    return true;
#else
    return false;
#endif
  }
  if (name == "onednn" || name == "onednn-packed") {
#if defined(NKBENCH_EXPECT_ONEDNN)
    return true;
#else
    return false;
#endif
  }
  return true;
}

inline BackendConfig hostConfig(Isa isa, int threads = 1) {
  BackendConfig config;
  config.host = detectCpuFeatures();
  config.isa = isa;
  config.threads = threads;
  return config;
}

// The host's best vector level: tests of the vector routes never take what
// `auto` resolves to, which is the tile route on AMX hosts.
inline Isa bestHostIsa() { return std::min(bestIsa(detectCpuFeatures()).value_or(Isa::Avx2), Isa::Avx512Bf16); }

// Runs pack, compute and unpack the way the runner does. Beta-0 problems start from
// a NaN C (which must never be read) and compute twice (the runner repeats it).
// bf16 problems get bf16 A and B (and C, for a bf16 C); the reference sees the same values.
// A, B and C are guarded as the runner's are: an access outside them faults, and a
// write into their canary slack fails the test.
inline RunOutcome runAgainstReference(Backend& backend, const Problem& problem) {
  const ProblemData data = makeProblemData(problem, FillMode::ExactInteger);
  COperand c(problem, data);
  const GuardedInput a(problem.dtype, data.a, "A"), b(problem.dtype, data.b, "B");
  const Operands operands{a.data(), b.data(), c.data()};

  const std::unique_ptr<Kernel> kernel = backend.prepare(problem, operands);
  kernel->pack();
  kernel->compute();
  if (!problem.accumulate) kernel->compute();
  kernel->finishCalls();
  kernel->unpack();
  for (const std::optional<std::string>& damage : {a.canaryDamage(), b.canaryDamage(), c.canaryDamage()})
    if (damage) ADD_FAILURE() << backend.name() << " on " << problem.describe() << ": " << *damage;

  const ReferenceResult reference =
      referenceGemm(problem, data.a.data(), data.b.data(), data.c_init.data());
  return {verifyResult(problem, FillMode::ExactInteger, c.asFloat().data(), reference), kernel->info()};
}

inline Problem brgemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                      bool accumulate) {
  return test::makeProblem(m, n, k, batch, accumulate);
}

inline Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  return test::makeProblem(m, n, k, 1, false, OpKind::Gemm);
}

inline const std::vector<std::string> kBaselines = {"eigen", "libxsmm", "onednn", "onednn-packed"};

// One parameter of the shape matrices: a backend and a problem.
struct BaselineCase {
  std::string backend;
  Problem problem;
};

// Readable test names in ctest instead of gtest's byte dump.
inline void PrintTo(const BaselineCase& param, std::ostream* out) {
  *out << param.backend << ": " << param.problem.describe();
}

inline std::string caseName(const testing::TestParamInfo<BaselineCase>& info) {
  const Problem& p = info.param.problem;
  std::string backend = info.param.backend;
  std::replace(backend.begin(), backend.end(), '-', '_');
  return fmt::format("{}_{}_{}x{}x{}_b{}_beta{}{}", backend, toString(p.kind), p.m, p.n, p.k, p.batch,
                     p.accumulate ? 1 : 0, p.c_dtype == DType::BF16 ? "_cbf16" : "");
}

inline Problem asBf16(Problem problem, DType c_dtype = DType::F32) {
  problem.dtype = DType::BF16;
  problem.c_dtype = c_dtype;
  return problem;
}

}  // namespace nkbench::test
