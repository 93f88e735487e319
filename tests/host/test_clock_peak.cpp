#include <gtest/gtest.h>

#include <cmath>

#include "harness/core/error.h"
#include "harness/host/clock.h"
#include "harness/host/peak.h"

namespace nkbench {
namespace {

// Timing on a shared VM is noisy: only plausibility is checked, never a threshold.
TEST(Clock, CoreClockIsPlausible) {
  const double ghz = measureCoreClockGhz();
  EXPECT_GT(ghz, 0.5);
  EXPECT_LT(ghz, 7.0);
}

TEST(Peak, MeasuresEverySupportedVectorWidthAndRejectsTheRest) {
  const CpuFeatures host = detectCpuFeatures();
  for (Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Amx}) {
    if (host.has(isa)) {
      EXPECT_GT(measureFp32PeakGflops(isa), 0.0) << toString(isa);
    } else {
      EXPECT_THROW(measureFp32PeakGflops(isa), Error) << toString(isa);
    }
  }
}

// CPUID cannot be faked, so each host runs the one of these two it can reach.
TEST(Peak, Bf16DotPeakIsPositiveAndFinite) {
  if (!detectCpuFeatures().has(Isa::Avx512Bf16)) GTEST_SKIP() << "host lacks avx512-bf16";
  const double gflops = measureBf16DotPeakGflops();
  EXPECT_TRUE(std::isfinite(gflops)) << gflops;
  EXPECT_GT(gflops, 0.0);
}

TEST(Peak, Bf16DotPeakThrowsWithoutAvx512Bf16) {
  if (detectCpuFeatures().has(Isa::Avx512Bf16)) GTEST_SKIP() << "host has avx512-bf16";
  EXPECT_THROW(measureBf16DotPeakGflops(), Error);
}

// Without AMX (this CI host) the measurement refuses before executing a tile
// instruction; with it, tiles beat the vector dot product by several times.
TEST(Peak, AmxPeakRunsOnlyWhereTheHostHasAmx) {
  if (!detectCpuFeatures().has(Isa::Amx)) {
    EXPECT_THROW(measureAmxBf16PeakGflops(), Error);
    return;
  }
  const double gflops = measureAmxBf16PeakGflops();
  EXPECT_TRUE(std::isfinite(gflops)) << gflops;
  EXPECT_GT(gflops, measureBf16DotPeakGflops());
}

// Which bf16 peak a run measures, for every level and with or without bf16 cases.
TEST(Peak, Bf16PeakFollowsTheRunsLevel) {
  EXPECT_EQ(bf16PeakFor(Isa::Avx2, true), Bf16Peak::None);
  EXPECT_EQ(bf16PeakFor(Isa::Avx512, true), Bf16Peak::None);
  EXPECT_EQ(bf16PeakFor(Isa::Avx512Bf16, true), Bf16Peak::DotProduct);
  EXPECT_EQ(bf16PeakFor(Isa::AmxEmulated, true), Bf16Peak::DotProduct);
  EXPECT_EQ(bf16PeakFor(Isa::Amx, true), Bf16Peak::Tiles);
  for (Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::AmxEmulated, Isa::Amx})
    EXPECT_EQ(bf16PeakFor(isa, false), Bf16Peak::None) << toString(isa);
}

}  // namespace
}  // namespace nkbench
