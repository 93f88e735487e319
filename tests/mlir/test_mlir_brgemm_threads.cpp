// BRGEMMs on two threads on the mlir backend: each thread computes a panel of
// C's rows, a BRGEMM of its own on the case's schedule, on every route the
// host runs (f32 FMA, the bf16 routes, the tile route emulated), beta 0 and 1,
// with ragged rows, and a bf16 C whose stack panels are shorter than a
// thread's share; all bit for bit against the reference.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/mlir/mlir_backend.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench {
namespace {

struct Route {
  Isa isa;
  DType dtype;
  const char* schedule;  // "": the analytic one
};
const std::vector<Route> kRoutes = {
    {Isa::Avx2, DType::F32, ""},           {Isa::Avx512, DType::F32, ""},
    {Isa::Avx2, DType::BF16, ""},          {Isa::Avx512, DType::BF16, "avx512.bf16-widen.8x32"},
    {Isa::Avx512Bf16, DType::BF16, ""},    {Isa::AmxEmulated, DType::BF16, ""},
};

BackendConfig twoThreads(const Route& route) {
  BackendConfig config = test::hostConfig(route.isa, 2);
  config.mlir_schedule = route.schedule;
  return config;
}

TEST(MlirBrgemmThreads, EachThreadsRowPanelMatchesTheReferenceOnEveryRoute) {
  for (const Route& route : kRoutes) {
    if (!detectCpuFeatures().has(route.isa)) continue;
    const std::unique_ptr<Backend> backend = makeMlirBackend(twoThreads(route));
    for (bool accumulate : {false, true})
      for (Problem problem : {test::brgemm(64, 48, 40, 4, accumulate), test::brgemm(25, 18, 48, 3, accumulate),
                              test::brgemm(9, 33, 6, 2, accumulate)}) {
        if (route.dtype == DType::BF16) problem = test::asBf16(problem);
        SCOPED_TRACE(fmt::format("--isa {} {} {}", toString(route.isa), route.schedule, problem.describe()));
        ASSERT_EQ(backend->unsupportedReason(problem), std::nullopt);
        const test::RunOutcome outcome = test::runAgainstReference(*backend, problem);
        EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
        EXPECT_EQ(outcome.verification.max_error, 0.0);
        const std::int64_t rows = problem.m == 64 ? 32 : problem.m == 25 ? 16 : 8;
        EXPECT_EQ(outcome.info.packing.rfind(fmt::format("A -> 2 row panels of {} rows, shared out among 2 threads",
                                                         rows),
                                             0),
                  0u)
            << outcome.info.packing;
      }
  }
}

// A bf16 C too tall for the f32 sum on the stack: its panels, shorter than a
// thread's share, are dealt out among the threads.
TEST(MlirBrgemmThreads, StackPanelsOfATallBf16CAreSharedOut) {
  const Route route{test::bestHostIsa(), DType::BF16, ""};
  const std::unique_ptr<Backend> backend = makeMlirBackend(twoThreads(route));
  const Problem tall = test::asBf16(test::brgemm(600, 2000, 8, 1, true), DType::BF16);
  ASSERT_EQ(backend->unsupportedReason(tall), std::nullopt);
  const test::RunOutcome outcome = test::runAgainstReference(*backend, tall);
  EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
  EXPECT_EQ(outcome.verification.max_error, 0.0);
  EXPECT_EQ(outcome.info.packing.rfind("A -> 5 row panels of 128 rows, shared out among 2 threads", 0), 0u)
      << outcome.info.packing;
}

// Too few rows for a panel per thread: skipped with the reason, in `run`'s
// words, never computed on one thread.
TEST(MlirBrgemmThreads, RowsTooFewForEveryThreadAreSkipped) {
  const std::unique_ptr<Backend> backend = makeMlirBackend(twoThreads({Isa::Avx2, DType::F32, ""}));
  EXPECT_EQ(backend->unsupportedReason(test::brgemm(8, 64, 64, 4, false)),
            "mlir: 2 threads share out a BRGEMM's C rows in panels of whole multiples of 8 rows, and its 8 rows make "
            "one");
}

}  // namespace
}  // namespace nkbench
