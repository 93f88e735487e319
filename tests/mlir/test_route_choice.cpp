// The route rule under an AMX cap: tiles where most of their work is the case's
// own, the vector kernels where padding would dominate; named schedules as given.
#include <gtest/gtest.h>

#include "kernels/mlir/route_choice.h"
#include "tests/support/test_problems.h"

namespace nkbench::mlir_backend {
namespace {

Problem bf16(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  Problem p = test::makeProblem(m, n, k, batch, false);
  p.dtype = DType::BF16;
  return p;
}

TEST(RouteChoice, UtilisationCountsTilePadding) {
  EXPECT_DOUBLE_EQ(tileUtilisation(bf16(32, 32, 32, 8)), 1.0);
  EXPECT_DOUBLE_EQ(tileUtilisation(bf16(8, 32, 32, 32)), 0.5);
  EXPECT_DOUBLE_EQ(tileUtilisation(bf16(7, 33, 6, 1)), (7.0 * 33 * 6) / (16.0 * 48 * 32));
  EXPECT_DOUBLE_EQ(tileUtilisation(bf16(16, 16, 33, 1)), 33.0 / 64);
}

// The threshold itself keeps the tiles: 4 of 16 rows is exactly a quarter.
TEST(RouteChoice, AQuarterUsefulStaysOnTheTiles) {
  EXPECT_DOUBLE_EQ(tileUtilisation(bf16(4, 16, 32, 64)), kMinTileUtilisation);
  EXPECT_EQ(chooseRoute(Isa::Amx, bf16(4, 16, 32, 64)).schedule.nanokernel, NanokernelKind::AmxTile);
}

TEST(RouteChoice, TilesOnTheGridAndAtHalfUse) {
  for (Isa isa : {Isa::Amx, Isa::AmxEmulated})
    for (const Problem& p : {bf16(32, 32, 32, 8), bf16(64, 64, 64, 64), bf16(8, 32, 32, 32), bf16(100, 37, 129, 4)}) {
      const RouteChoice route = chooseRoute(isa, p);
      EXPECT_EQ(route.schedule.nanokernel, NanokernelKind::AmxTile) << p.describe();
      EXPECT_TRUE(route.reason.empty()) << route.reason;
    }
}

TEST(RouteChoice, MostlyPaddingTakesTheVectorRouteAndSaysWhy) {
  for (Isa isa : {Isa::Amx, Isa::AmxEmulated})
    for (const Problem& p : {bf16(7, 33, 6, 1), bf16(5, 100, 2, 9), bf16(7, 36, 5, 2), bf16(3, 16, 32, 64)}) {
      const RouteChoice route = chooseRoute(isa, p);
      EXPECT_EQ(route.schedule.name, "avx512bf16.bf16.8x32") << p.describe();
      EXPECT_EQ(route.reason.rfind("vector route: the tiles would do ", 0), 0u) << route.reason;
      EXPECT_NE(route.reason.find("useful work, below 25%"), std::string::npos) << route.reason;
    }
}

TEST(RouteChoice, NamedSchedulesAndOtherCapsAreLeftAlone) {
  const RouteChoice named = chooseRoute(Isa::Amx, bf16(7, 33, 6, 1), "amx.bf16.32x32");
  EXPECT_EQ(named.schedule.name, "amx.bf16.32x32");
  EXPECT_TRUE(named.reason.empty());
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, bf16(7, 33, 6, 1)).schedule.name, "avx512bf16.bf16.8x32");
  EXPECT_EQ(chooseRoute(Isa::Avx2, bf16(7, 33, 6, 1)).schedule.name, "avx2.bf16-widen.6x16");
  Problem f32 = test::makeProblem(7, 33, 6, 1, false);
  EXPECT_EQ(chooseRoute(Isa::Amx, f32).schedule.name, "avx512.f32.8x32");
  EXPECT_TRUE(chooseRoute(Isa::Amx, f32).reason.empty());
}

}  // namespace
}  // namespace nkbench::mlir_backend
