#include <gtest/gtest.h>

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

}  // namespace
}  // namespace nkbench
