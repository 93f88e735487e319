// BRGEMMs on two threads on the mlir backend: each thread computes a panel of
// C's rows, a BRGEMM of its own on the case's schedule, on every route the
// host runs (f32 FMA, the bf16 routes, the tile route emulated), beta 0 and 1,
// with ragged rows, and a bf16 C whose stack panels are shorter than a
// thread's share; all bit for bit against the reference.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/schedule/schedule.h"
#include "tests/backends/baseline_test_support.h"
#include "tests/support/row_panel_layout.h"

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
        const char* panels = problem.m == 64   ? "2 row panels of 32 rows"
                             : problem.m == 25 ? "2 row panels (1 of 16 rows, 1 of 9)"
                                               : "2 row panels (1 of 8 rows, 1 of 1)";
        EXPECT_EQ(outcome.info.packing.rfind(fmt::format("A, C -> {}, shared out among 2 threads", panels), 0), 0u)
            << outcome.info.packing;
      }
  }
}

// A bf16 C too tall for the f32 sum on the stack (at most 131 rows of 2000):
// each thread's panel (296 and 304 rows) is cut into three pieces of whole
// register blocks, on that thread (104 rows on AVX-512's 8-row blocks, 102
// on AVX2's 6).
TEST(MlirBrgemmThreads, StackPanelsOfATallBf16CAreCutPerThread) {
  const Route route{test::bestHostIsa(), DType::BF16, ""};
  const std::unique_ptr<Backend> backend = makeMlirBackend(twoThreads(route));
  const Problem tall = test::asBf16(test::brgemm(600, 2000, 8, 1, true), DType::BF16);
  ASSERT_EQ(backend->unsupportedReason(tall), std::nullopt);
  const test::RunOutcome outcome = test::runAgainstReference(*backend, tall);
  EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
  EXPECT_EQ(outcome.verification.max_error, 0.0);
  EXPECT_TRUE(std::regex_search(outcome.info.packing,
                                std::regex("^A, C -> 6 row panels \\(2 of (104 rows, 1 of 88, 2 of 104, 1 of 96|102 rows, 1 "
                                           "of 92, 2 of 102, 1 of 100)\\), shared out among 2 threads")))
      << outcome.info.packing;
}

// The panels by schedule, whatever the host: one per thread, and where a
// bf16 C's f32 sum on the stack holds fewer rows, each cut into equal pieces
// of whole register blocks (AVX2's 6 rows, AVX-512's 8) that fit it.
TEST(MlirBrgemmThreads, PanelsAreOnePerThreadCutToTheStack) {
  const Problem f32 = test::brgemm(600, 2000, 8, 1, true);
  const Problem bf16_c = test::asBf16(f32, DType::BF16);
  const mlir_backend::Schedule avx2 = mlir_backend::selectSchedule(Isa::Avx2, DType::BF16);
  const mlir_backend::Schedule avx512 = mlir_backend::selectSchedule(Isa::Avx512Bf16, DType::BF16);
  ASSERT_EQ(avx2.block_m, 6);
  ASSERT_EQ(avx512.block_m, 8);
  const mlir_backend::Schedule f32_schedule = mlir_backend::selectSchedule(Isa::Avx2, DType::F32);
  EXPECT_EQ(test::rowPanelLayout(mlir_backend::brgemmPanels(f32, f32_schedule, 1)), "600@0");
  EXPECT_EQ(test::rowPanelLayout(mlir_backend::brgemmPanels(f32, f32_schedule, 2)), "296@0+304@1");
  EXPECT_EQ(test::rowPanelLayout(mlir_backend::brgemmPanels(bf16_c, avx2, 2)), "102@0+102@0+92@0+102@1+102@1+100@1");
  EXPECT_EQ(test::rowPanelLayout(mlir_backend::brgemmPanels(bf16_c, avx512, 2)), "104@0+104@0+88@0+104@1+104@1+96@1");
  EXPECT_EQ(test::rowPanelLayout(mlir_backend::brgemmPanels(bf16_c, avx2, 1)), "120@0+120@0+120@0+120@0+120@0");
  EXPECT_EQ(test::rowPanelLayout(mlir_backend::brgemmPanels(bf16_c, avx512, 1)), "120@0+120@0+120@0+120@0+120@0");
  const Problem small = test::asBf16(test::brgemm(64, 64, 8, 1, false), DType::BF16);
  EXPECT_EQ(test::rowPanelLayout(mlir_backend::brgemmPanels(small, avx512, 2)), "32@0+32@1");  // each fits whole
}

// Too few rows for a panel per thread: skipped with the reason, in `run`'s
// words, never computed on one thread.
TEST(MlirBrgemmThreads, RowsTooFewForEveryThreadAreSkipped) {
  const std::unique_ptr<Backend> backend = makeMlirBackend(twoThreads({Isa::Avx2, DType::F32, ""}));
  EXPECT_EQ(backend->unsupportedReason(test::brgemm(8, 64, 64, 4, false)),
            "mlir: 2 threads share out a BRGEMM's C rows in panels of whole multiples of 8 rows (the last the rest), "
            "and its 8 rows make one");
}

}  // namespace
}  // namespace nkbench
