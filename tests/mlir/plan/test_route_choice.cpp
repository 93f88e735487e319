// The route rule under an AMX cap: tiles where most of their work is the case's
// own, the vector kernels where padding would dominate; named schedules as given.
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "kernels/mlir/route_choice.h"
#include "kernels/mlir/tuning/shape_class.h"
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
  EXPECT_EQ(chooseRoute(Isa::Avx2, bf16(7, 33, 6, 1)).schedule.name, "avx2.bf16-f32a.6x16");
  Problem f32 = test::makeProblem(7, 33, 6, 1, false);
  EXPECT_EQ(chooseRoute(Isa::Amx, f32).schedule.name, "avx512.f32.8x32");
  EXPECT_TRUE(chooseRoute(Isa::Amx, f32).reason.empty());
}

RouteRequest withPeaks(double fp32, double dot) {
  RouteRequest request;
  request.peaks = {fp32, dot};
  return request;
}

// The host rule, on injected peaks: the Sapphire Rapids-class VM's (dot 123,
// FMA 247 GFLOPS) move bf16 to the FMAs; the Zen 5-class VM's (224, 108) keep
// the dot product, as do unmeasured peaks.
TEST(RouteChoice, Bf16TakesTheFmasWhereTheDotProductIsSlower) {
  EXPECT_TRUE(bf16DotSlowerThanFma({247, 123}));
  EXPECT_FALSE(bf16DotSlowerThanFma({108, 224}));
  EXPECT_FALSE(bf16DotSlowerThanFma({232, 204}));  // a noisy measurement, not a slow dot product
  EXPECT_FALSE(bf16DotSlowerThanFma({}));
  const Problem p = bf16(32, 32, 32, 32);
  const RouteChoice slow = chooseRoute(Isa::Avx512Bf16, p, withPeaks(247, 123));
  EXPECT_EQ(slow.schedule.name, "avx512.bf16-f32a.8x32");
  EXPECT_EQ(slow.source, "analytic");
  EXPECT_NE(slow.reason.find("vdpbf16ps peak of 123 GFLOPS is below the fp32 FMA peak of 247"), std::string::npos);
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, p, withPeaks(108, 224)).schedule.name, "avx512bf16.bf16.8x32");
  EXPECT_TRUE(chooseRoute(Isa::Avx512Bf16, p, withPeaks(108, 224)).reason.empty());
  // Under AMX the tiles keep the cases they suit; the vector route of the others follows the rule.
  EXPECT_EQ(chooseRoute(Isa::Amx, p, withPeaks(247, 123)).schedule.nanokernel, NanokernelKind::AmxTile);
  const RouteChoice off_grid = chooseRoute(Isa::Amx, bf16(7, 33, 6, 1), withPeaks(247, 123));
  EXPECT_EQ(off_grid.schedule.name, "avx512.bf16-f32a.8x32");
  EXPECT_NE(off_grid.reason.find("vector route: the tiles would do"), std::string::npos);
  EXPECT_NE(off_grid.reason.find("f32 FMAs"), std::string::npos);
  // f32, a named schedule and a tuned one are left alone.
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, test::makeProblem(32, 32, 32, 32, false), withPeaks(247, 123)).schedule.name,
            "avx512.f32.8x32");
  RouteRequest named = withPeaks(247, 123);
  named.named_schedule = "avx512bf16.bf16.8x32";
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, p, named).schedule.name, "avx512bf16.bf16.8x32");
}

// An mlp takes its first layer's route, on blocks that take a fused epilogue
// and bf16 activations: tiles where the layer takes them, whatever the threads
// (each thread configures its own), else the vector route; no A widened once
// when packed.
TEST(RouteChoice, AnMlpTakesItsFirstLayersRouteWithAFusedEpilogueButNoWidenedA) {
  Problem mlp;
  mlp.kind = OpKind::Mlp;
  mlp.dtype = mlp.c_dtype = DType::BF16;
  mlp.m = 256;
  mlp.mlp.widths = {1024, 1024, 1024};
  mlp.mlp.bias = true;
  mlp.mlp.activation = Activation::Relu;
  mlp.k = mlp.n = 1024;
  ASSERT_EQ(chooseRoute(Isa::Amx, mlp.mlpLayer(0)).schedule.nanokernel, NanokernelKind::AmxTile);
  const RouteChoice amx = chooseRoute(Isa::Amx, mlp, withPeaks(108, 224));
  EXPECT_EQ(amx.schedule.nanokernel, NanokernelKind::AmxTile);
  EXPECT_TRUE(amx.reason.empty()) << amx.reason;
  // Where the dot product is slow, the FMAs widen bf16 in registers instead of A once.
  const RouteChoice widened_once = chooseRoute(Isa::Avx512Bf16, mlp.mlpLayer(0), withPeaks(247, 123));
  ASSERT_EQ(widened_once.schedule.nanokernel, NanokernelKind::Bf16F32AFma);
  const RouteChoice slow = chooseRoute(Isa::Avx512Bf16, mlp, withPeaks(247, 123));
  EXPECT_EQ(slow.schedule.name, "avx512.bf16-widen.8x32");
  EXPECT_NE(slow.reason.find("activations stay bf16 between layers"), std::string::npos) << slow.reason;
  EXPECT_EQ(chooseRoute(Isa::Avx2, mlp).schedule.name, "avx2.bf16-widen.6x16");
  mlp.dtype = mlp.c_dtype = DType::F32;
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, mlp).schedule.name, "avx512.f32.8x32");
  EXPECT_TRUE(chooseRoute(Isa::Avx512Bf16, mlp).reason.empty());
}

TEST(RouteChoice, ATunedScheduleServesItsShapeClass) {
  const CacheSizes caches{48 * 1024, 1 << 20, 32 << 20};
  TunedSchedules tuned{"t.json", {{"brgemm bf16 m32+ n16-63 l2", "avx512bf16.bf16.4x48"}}};
  RouteRequest request = withPeaks(247, 123);
  request.tuned = &tuned;
  request.caches = caches;
  const RouteChoice choice = chooseRoute(Isa::Avx512Bf16, bf16(32, 48, 32, 16), request);
  EXPECT_EQ(choice.schedule.name, "avx512bf16.bf16.4x48");
  EXPECT_EQ(choice.source, "tuned: t.json");
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, bf16(8, 48, 32, 16), request).source, "analytic");  // another class
  request.named_schedule = "avx512bf16.bf16.8x32";
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, bf16(32, 48, 32, 16), request).source, "--schedule");
}

// `nkbench tune` measures an mlp whole and stores it under the mlp's own shape
// class: a run looks it up there, and never takes the tuned schedule of its first
// layer's GEMM class (which the tuner measured on GEMMs, not on layers).
TEST(RouteChoice, AnMlpTakesTheScheduleTunedForItsOwnClass) {
  Problem mlp;
  mlp.kind = OpKind::Mlp;
  mlp.dtype = mlp.c_dtype = DType::BF16;
  mlp.m = 256;
  mlp.mlp = {{1024, 1024, 1024, 1024}, true, Activation::Relu};
  mlp.k = mlp.n = 1024;
  const CacheSizes caches{48 * 1024, 1 << 20, 32 << 20};
  const std::string mlp_class = shapeClassOf(mlp, caches);
  const std::string layer_class = shapeClassOf(mlp.mlpLayer(0), caches);
  ASSERT_EQ(mlp_class, "mlp bf16 m32+ n64+ mem");
  ASSERT_NE(layer_class, mlp_class);
  TunedSchedules tuned{"t.json", {{mlp_class, "avx512bf16.bf16.12x32"}}};
  RouteRequest request = withPeaks(247, 247);
  request.tuned = &tuned;
  request.caches = caches;
  const RouteChoice choice = chooseRoute(Isa::Avx512Bf16, mlp, request);
  EXPECT_EQ(choice.schedule.name, "avx512bf16.bf16.12x32");
  EXPECT_EQ(choice.source, "tuned: t.json");
  // Tuned as an mlp where the dot product is slow too: no A widened once.
  tuned.by_class = {{mlp_class, "avx512.bf16-f32a.12x32"}};
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, mlp, request).schedule.name, "avx512.bf16-widen.12x32");
  // Only the first layer's GEMM class tuned: the mlp keeps the analytic route.
  tuned.by_class = {{layer_class, "avx512bf16.bf16.12x32"}};
  const RouteChoice untuned = chooseRoute(Isa::Avx512Bf16, mlp, request);
  EXPECT_EQ(untuned.schedule.name, "avx512bf16.bf16.8x32");
  EXPECT_EQ(untuned.source, "analytic");
  // A named schedule comes before the tuned one.
  tuned.by_class = {{mlp_class, "avx512bf16.bf16.12x32"}};
  request.named_schedule = "avx512bf16.bf16.4x64";
  EXPECT_EQ(chooseRoute(Isa::Avx512Bf16, mlp, request).source, "--schedule");
}

TEST(RouteChoice, ATunedScheduleThatCannotRunNamesTheFileAndClassNotTheOption) {
  TunedSchedules tuned{"t.json", {{"brgemm bf16 m32+ n16-63 l2", "amx.bf16.32x32"}}};
  RouteRequest request;
  request.tuned = &tuned;
  request.caches = {48 * 1024, 1 << 20, 32 << 20};
  try {
    chooseRoute(Isa::Avx512Bf16, bf16(32, 48, 32, 16), request);
    FAIL() << "an AMX schedule ran under avx512-bf16";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "tuned schedule amx.bf16.32x32 (t.json, class brgemm bf16 m32+ n16-63 l2) needs amx, "
                               "above --isa avx512-bf16");
  }
}

}  // namespace
}  // namespace nkbench::mlir_backend
