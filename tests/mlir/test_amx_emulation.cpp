// The AMX tile kernels, emulated in vector code (--isa amx-emulated), run on this
// host and checked bit for bit against the reference: their tile loads, strides,
// VNNI indexing and C handling are the AMX kernel's own.
#include <gtest/gtest.h>

#include <vector>

#include "harness/host/cache_info.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/mlir_compiler.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench {
namespace {

class AmxEmulation : public ::testing::TestWithParam<Problem> {};

TEST_P(AmxEmulation, MatchesTheReferenceExactly) {
  if (!detectCpuFeatures().has(Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  const Problem& problem = GetParam();
  const std::unique_ptr<Backend> backend = makeMlirBackend(test::hostConfig(Isa::AmxEmulated));
  ASSERT_EQ(backend->unsupportedReason(problem), std::nullopt);
  const test::RunOutcome outcome = test::runAgainstReference(*backend, problem);
  EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
  EXPECT_EQ(outcome.verification.max_error, 0.0);
  EXPECT_EQ(outcome.info.nanokernel.rfind("amx-tile-nanokernel", 0), 0u) << outcome.info.nanokernel;
  EXPECT_NE(outcome.info.implementation.find("(amx.bf16.32x32, emulated tiles)"), std::string::npos)
      << outcome.info.implementation;
  EXPECT_EQ(outcome.info.caveat, "emulated AMX: the timing is not AMX performance");
}

// On the tile grid, and off it: M and N remainders (tiles of fewer rows and
// columns), K padded to whole tile steps (odd K included), bf16 C under beta 0
// and 1, GEMMs (block kernels over padded blocks).
INSTANTIATE_TEST_SUITE_P(
    Shapes, AmxEmulation,
    ::testing::Values(test::asBf16(test::brgemm(32, 32, 64, 4, false)), test::asBf16(test::brgemm(64, 64, 64, 2, false)),
                      test::asBf16(test::brgemm(64, 64, 64, 2, true)),
                      test::asBf16(test::brgemm(48, 16, 32, 3, false)),    // 16-wide edges
                      test::asBf16(test::brgemm(33, 32, 64, 2, false)),    // one row past the grid
                      test::asBf16(test::brgemm(32, 47, 64, 1, true)),     // 15 columns past it
                      test::asBf16(test::brgemm(7, 33, 5, 1, true)),       // all three off, odd K
                      test::asBf16(test::brgemm(100, 37, 129, 3, false)),  // every band, K one past 4 steps
                      test::asBf16(test::brgemm(1, 1, 1, 1, false)),
                      test::asBf16(test::brgemm(32, 32, 64, 4, false), DType::BF16),
                      test::asBf16(test::brgemm(50, 70, 40, 2, true), DType::BF16),
                      test::asBf16(test::brgemm(17, 3, 31, 2, false), DType::BF16),
                      test::asBf16(test::gemm(100, 37, 129)), test::asBf16(test::gemm(64, 48, 96), DType::BF16)),
    [](const testing::TestParamInfo<Problem>& param) {
      const Problem& p = param.param;
      return fmt::format("{}_m{}n{}k{}b{}beta{}{}", toString(p.kind), p.m, p.n, p.k, p.batch, p.accumulate ? 1 : 0,
                         p.c_dtype == DType::BF16 ? "_cbf16" : "");
    });

// tdpbf16ps's order, where rounding tells it apart: C[0][0] sums pair 0 (odd 2^24,
// even 1), then pair 1 (odd 1, even -2^24). Odd first per pair gives 0: 2^24 + 1
// rounds back to 2^24 twice. Even first, or plain K order, gives 1.
TEST(AmxEmulationOrder, EachPairAddsItsOddProductFirst) {
  if (!detectCpuFeatures().has(Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  const Problem problem = test::asBf16(test::brgemm(16, 16, 32, 1, false));
  mlir_backend::MlirCompiler compiler(Isa::AmxEmulated, CacheSizes{});
  const auto kernel = compiler.compile(problem, mlir_backend::selectSchedule(Isa::AmxEmulated, DType::BF16),
                                       mlir_backend::Lowering::Nanokernel);
  std::vector<BFloat16> a(16 * 32, toBFloat16(0.0f)), b(16 * 32, toBFloat16(0.0f));  // B: 16 pair rows x 32
  std::vector<float> c(16 * 16, -1.0f);
  a[0] = toBFloat16(1.0f), a[1] = toBFloat16(4096.0f), a[2] = toBFloat16(-4096.0f), a[3] = toBFloat16(1.0f);
  b[0] = toBFloat16(1.0f), b[1] = toBFloat16(4096.0f), b[32] = toBFloat16(4096.0f), b[33] = toBFloat16(1.0f);
  kernel->function()(a.data(), b.data(), c.data());
  EXPECT_EQ(c[0], 0.0f);
  EXPECT_EQ(c[1], 0.0f);
}

// A bf16 C is summed per block: no stack limit on M x N, unlike the dot route.
TEST(AmxEmulationShapes, LargeBf16CIsNotLimitedByTheStack) {
  const std::unique_ptr<Backend> backend = makeMlirBackend(test::hostConfig(Isa::AmxEmulated));
  EXPECT_EQ(backend->unsupportedReason(test::asBf16(test::brgemm(1024, 1024, 64, 1, false), DType::BF16)),
            std::nullopt);
}

}  // namespace
}  // namespace nkbench
