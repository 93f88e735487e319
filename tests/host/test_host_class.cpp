// Host classes: masking the detected CPU down to a smaller class only removes
// features, and every decision then is the smaller host's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness/core/error.h"
#include "harness/core/host_class.h"

namespace nkbench {
namespace {

CpuFeatures amxHost() {
  CpuFeatures f;
  f.fma = f.avx2 = f.os_ymm_state = true;
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = f.os_zmm_state = true;
  f.avx512_bf16 = f.avx512_vnni = true;
  f.amx_tile = f.amx_bf16 = f.os_tile_state = true;
  f.tile_permission = {.requested = true, .error = 0};
  return f;
}

TEST(HostClass, ParsesTheCpuLevelsOnly) {
  EXPECT_EQ(parseHostClass("avx2"), Isa::Avx2);
  EXPECT_EQ(parseHostClass("avx512"), Isa::Avx512);
  EXPECT_EQ(parseHostClass("avx512-bf16"), Isa::Avx512Bf16);
  EXPECT_EQ(parseHostClass("amx"), Isa::Amx);
  EXPECT_EQ(parseHostClass("amx-emulated"), std::nullopt);  // a way to run kernels, not a CPU
  EXPECT_EQ(parseHostClass("sse4"), std::nullopt);
}

TEST(HostClass, EachClassIsTheBestLevelOfItsMask) {
  for (Isa top : {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::Amx}) {
    const CpuFeatures masked = maskToHostClass(amxHost(), top);
    EXPECT_EQ(bestIsa(masked), top) << toString(top);
    EXPECT_EQ(masked.host_class, top == Isa::Amx ? "" : std::string(toString(top)));
  }
  const CpuFeatures avx2 = maskToHostClass(amxHost(), Isa::Avx2);
  EXPECT_FALSE(avx2.has(Isa::Avx512));
  EXPECT_FALSE(avx2.has(Isa::AmxEmulated));  // emulated tiles need avx512-bf16
  EXPECT_FALSE(avx2.tile_permission.requested);
  EXPECT_TRUE(avx2.os_zmm_state) << "the OS state stays as detected";
  EXPECT_TRUE(maskToHostClass(amxHost(), Isa::Avx512Bf16).has(Isa::AmxEmulated));
}

// A mask never adds a feature: a class above the host leaves it as it is.
TEST(HostClass, AClassAboveTheHostChangesNothing) {
  CpuFeatures avx2;
  avx2.fma = avx2.avx2 = avx2.os_ymm_state = true;
  for (Isa top : {Isa::Avx512, Isa::Avx512Bf16, Isa::Amx}) {
    const CpuFeatures masked = maskToHostClass(avx2, top);
    EXPECT_EQ(bestIsa(masked), Isa::Avx2);
    EXPECT_EQ(masked.flagNames(), avx2.flagNames());
  }
}

// Refusals on a masked host name what is missing and that a mask is in force.
TEST(HostClass, RefusalsNameTheMask) {
  std::string error;
  EXPECT_FALSE(resolveIsa(Isa::Amx, maskToHostClass(amxHost(), Isa::Avx512Bf16), &error));
  EXPECT_EQ(error.rfind("--isa amx: CPU lacks amx-tile (has: ", 0), 0u) << error;
  EXPECT_NE(error.find("; NKBENCH_HOST_CLASS=avx512-bf16 masks the rest)"), std::string::npos) << error;
  EXPECT_FALSE(resolveIsa(Isa::Avx512, maskToHostClass(amxHost(), Isa::Avx2), &error));
  EXPECT_EQ(error, "--isa avx512: this host lacks avx512 (has: avx2, fma; NKBENCH_HOST_CLASS=avx2 masks the rest)");
  EXPECT_EQ(resolveIsa(std::nullopt, maskToHostClass(amxHost(), Isa::Avx512), &error), Isa::Avx512);
}

TEST(HostClass, TheEnvironmentNamesTheClass) {
  const char* saved = std::getenv(kHostClassVariable);
  const std::string previous = saved ? saved : "";
  setenv(kHostClassVariable, "avx2", 1);
  EXPECT_EQ(hostClassFromEnvironment(), Isa::Avx2);
  EXPECT_FALSE(detectCpuFeatures().has(Isa::Avx512));
  EXPECT_EQ(bestIsa(detectCpuFeatures()), std::optional<Isa>(Isa::Avx2));
  setenv(kHostClassVariable, "", 1);
  EXPECT_EQ(hostClassFromEnvironment(), std::nullopt);
  setenv(kHostClassVariable, "pentium", 1);
  try {
    hostClassFromEnvironment();
    ADD_FAILURE() << "no error for a bad class";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()),
              "NKBENCH_HOST_CLASS=pentium: not a host class (expected avx2, avx512, avx512-bf16 or amx)");
  }
  if (saved)
    setenv(kHostClassVariable, previous.c_str(), 1);
  else
    unsetenv(kHostClassVariable);
}

}  // namespace
}  // namespace nkbench
