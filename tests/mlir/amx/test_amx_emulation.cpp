// The AMX tile kernels on emulated tiles (--isa amx-emulated) and, where
// the host has AMX, on real tiles, checked bit for bit against the reference:
// their tile loads, strides, VNNI indexing and C handling are the AMX kernel's own.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/host/cache_info.h"
#include "kernels/mlir/amx/tile_emulator.h"
#include "kernels/mlir/amx/tile_state.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/mlir/mlir_compiler.h"
#include "tests/backends/baseline_test_support.h"

namespace nkbench {
namespace {

class AmxEmulation : public ::testing::TestWithParam<Problem> {};

// The tile levels this host runs: emulated tiles where it has avx512-bf16, and
// real tiles too where it has AMX.
std::vector<Isa> hostTileLevels() {
  std::vector<Isa> levels;
  for (Isa isa : {Isa::AmxEmulated, Isa::Amx})
    if (detectCpuFeatures().has(isa)) levels.push_back(isa);
  return levels;
}

TEST_P(AmxEmulation, MatchesTheReferenceExactly) {
  if (hostTileLevels().empty()) GTEST_SKIP() << "host lacks avx512-bf16";
  const Problem& problem = GetParam();
  for (Isa isa : hostTileLevels()) {
    SCOPED_TRACE(toString(isa));
    // Named, so that shapes the route rule would give the vector kernels still run on tiles.
    BackendConfig config = test::hostConfig(isa);
    config.mlir_schedule = "amx.bf16.32x32";
    const std::unique_ptr<Backend> backend = makeMlirBackend(config);
    ASSERT_EQ(backend->unsupportedReason(problem), std::nullopt);
    const test::RunOutcome outcome = test::runAgainstReference(*backend, problem);
    EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
    EXPECT_EQ(outcome.verification.max_error, 0.0);
    EXPECT_EQ(outcome.info.nanokernel.rfind("amx-tile-nanokernel", 0), 0u) << outcome.info.nanokernel;
    const bool emulated = isa == Isa::AmxEmulated;
    EXPECT_NE(outcome.info.implementation.find(emulated ? "(amx.bf16.32x32, emulated tiles)" : "(amx.bf16.32x32)"),
              std::string::npos)
        << outcome.info.implementation;
    EXPECT_EQ(outcome.info.caveat, emulated ? "emulated AMX: the timing is not AMX performance" : "");
  }
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

// One emulated tdpbf16ps (a 16x16x32 kernel, batch 1) on crafted operands; C[0][0] returned.
// A is 16 x 32 bf16; B is 16 VNNI pair rows x 16 columns x 2. Element (pair p,
// half h) of C[0][0]'s sum is a[2p + h] * b[p * 32 + h].
class TileProduct : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!detectCpuFeatures().has(Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  }
  static float firstElement(bool accumulate, const std::vector<std::pair<float, float>>& even_odd_a,
                            const std::vector<std::pair<float, float>>& even_odd_b, float c_init = 0.0f) {
    return firstElementOfBits(accumulate, toBits(even_odd_a), toBits(even_odd_b), c_init);
  }
  static std::vector<std::pair<BFloat16, BFloat16>> toBits(const std::vector<std::pair<float, float>>& values) {
    std::vector<std::pair<BFloat16, BFloat16>> bits;
    for (const auto& [even, odd] : values) bits.emplace_back(toBFloat16(even), toBFloat16(odd));
    return bits;
  }
  static float firstElementOfBits(bool accumulate, const std::vector<std::pair<BFloat16, BFloat16>>& a_pairs,
                                  const std::vector<std::pair<BFloat16, BFloat16>>& b_pairs, float c_init) {
    const Problem problem = test::asBf16(test::brgemm(16, 16, 32, 1, accumulate));
    mlir_backend::MlirCompiler compiler(Isa::AmxEmulated, CacheSizes{});
    const auto kernel = compiler.compile(problem, mlir_backend::selectSchedule(Isa::AmxEmulated, DType::BF16),
                                         mlir_backend::Lowering::Nanokernel);
    std::vector<BFloat16> a(16 * 32, toBFloat16(0.0f)), b(16 * 32, toBFloat16(0.0f));
    for (std::size_t p = 0; p < a_pairs.size(); ++p) std::tie(a[2 * p], a[2 * p + 1]) = a_pairs[p];
    for (std::size_t p = 0; p < b_pairs.size(); ++p) std::tie(b[32 * p], b[32 * p + 1]) = b_pairs[p];
    std::vector<float> c(16 * 16, c_init);
    const std::optional<mlir_backend::TileCalls>& tiles = kernel->tileCalls();
    EXPECT_TRUE(tiles && tiles->machine == mlir_backend::TileMachine::Emulated);
    mlir_backend::useTileConfig(mlir_backend::TileMachine::Emulated, tiles->entry_palette);
    kernel->function()(a.data(), b.data(), c.data());
    mlir_backend::releaseTiles(mlir_backend::TileMachine::Emulated);
    EXPECT_EQ(mlir_backend::takeEmulatedTileFault(), std::nullopt);
    return c[0];
  }
};

constexpr float kTwo24 = 16777216.0f;  // 2^24: adding 1 to it is a tie, which rounds back to it

// The even products and the odd products are summed apart: even = 1 + 0, odd =
// 1 + 2^24 = 2^24 (tie to even), even + odd = 2^24. Any sequential order
// (plain K order, or odd then even per pair, as vdpbf16ps) gives 1 + 1 + 2^24 exactly.
TEST_F(TileProduct, SumsEvenAndOddProductsApart) {
  EXPECT_EQ(firstElement(false, {{1, 1}, {0, 4096}}, {{1, 1}, {0, 4096}}), kTwo24);
}

// The instruction's sum joins C at the end: 2^24 + (1 + 1) is exact, where
// adding each product to C in turn rounds 2^24 + 1 back to 2^24 twice.
TEST_F(TileProduct, AddsItsSumToCOnce) {
  EXPECT_EQ(firstElement(true, {{1, 1}}, {{1, 1}}, kTwo24), kTwo24 + 2.0f);
}

// Denormal inputs count as zero: 2^-133 (a bf16 denormal) * 2^100 would be 2^-33.
TEST_F(TileProduct, ReadsDenormalInputsAsZero) {
  const std::pair<BFloat16, BFloat16> denormal{BFloat16{0x0001}, toBFloat16(0.0f)};
  EXPECT_EQ(firstElementOfBits(false, {denormal}, toBits({{std::ldexp(1.0f, 100), 0}}), 0.0f), 0.0f);
}

// Denormal results are flushed to zero: -2^-70 * 2^-70 = -2^-140 would otherwise
// reach C (the flushed -0 then meets the odd partial's +0, so C is +0).
TEST_F(TileProduct, FlushesDenormalResultsToZero) {
  EXPECT_EQ(firstElement(false, {{-std::ldexp(1.0f, -70), 0}}, {{std::ldexp(1.0f, -70), 0}}), 0.0f);
}

// The other tile blocks, emulated, on and off their grid.
TEST(AmxEmulationShapes, EveryTileBlockMatchesTheReferenceExactly) {
  if (!detectCpuFeatures().has(Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  for (const char* schedule : {"amx.bf16.16x48", "amx.bf16.48x16"})
    for (const Problem& problem : {test::asBf16(test::brgemm(48, 48, 64, 2, true)),
                                   test::asBf16(test::brgemm(50, 70, 40, 2, false), DType::BF16)}) {
      SCOPED_TRACE(fmt::format("{} {}", schedule, problem.describe()));
      BackendConfig config = test::hostConfig(Isa::AmxEmulated);
      config.mlir_schedule = schedule;
      const std::unique_ptr<Backend> backend = makeMlirBackend(config);
      const test::RunOutcome outcome = test::runAgainstReference(*backend, problem);
      EXPECT_EQ(outcome.verification.status, VerifyStatus::Passed) << outcome.verification.detail;
      EXPECT_EQ(outcome.verification.max_error, 0.0);
      EXPECT_NE(outcome.info.implementation.find(schedule), std::string::npos) << outcome.info.implementation;
    }
}

// Without a named schedule, shapes the tiles would mostly pad take the vector
// kernels (route_choice.h), verified alike, and the row says why.
TEST(AmxEmulationShapes, MostlyPaddedShapesTakeTheVectorRouteByTheRule) {
  if (!detectCpuFeatures().has(Isa::AmxEmulated)) GTEST_SKIP() << "host lacks avx512-bf16";
  const std::unique_ptr<Backend> backend = makeMlirBackend(test::hostConfig(Isa::AmxEmulated));
  const test::RunOutcome vector = test::runAgainstReference(*backend, test::asBf16(test::brgemm(7, 33, 6, 1, true)));
  EXPECT_EQ(vector.verification.status, VerifyStatus::Passed) << vector.verification.detail;
  EXPECT_EQ(vector.info.nanokernel.rfind("dot-nanokernel", 0), 0u) << vector.info.nanokernel;
  EXPECT_NE(vector.info.implementation.find("vector route: the tiles would do 6% useful work, below 25%"),
            std::string::npos)
      << vector.info.implementation;
  const test::RunOutcome tiles = test::runAgainstReference(*backend, test::asBf16(test::brgemm(8, 32, 32, 4, false)));
  EXPECT_EQ(tiles.verification.status, VerifyStatus::Passed) << tiles.verification.detail;
  EXPECT_EQ(tiles.info.nanokernel.rfind("amx-tile-nanokernel", 0), 0u) << tiles.info.nanokernel;
}

// A bf16 C is summed per block: no stack limit on M x N, unlike the dot route.
TEST(AmxEmulationShapes, LargeBf16CIsNotLimitedByTheStack) {
  const std::unique_ptr<Backend> backend = makeMlirBackend(test::hostConfig(Isa::AmxEmulated));
  EXPECT_EQ(backend->unsupportedReason(test::asBf16(test::brgemm(1024, 1024, 64, 1, false), DType::BF16)),
            std::nullopt);
}

}  // namespace
}  // namespace nkbench
