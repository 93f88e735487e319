#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

#include "harness/core/isa.h"

namespace nkbench {
namespace {

CpuFeatures avx2Host() {
  CpuFeatures f;
  f.fma = f.avx2 = f.os_ymm_state = true;
  return f;
}

CpuFeatures avx512Host() {
  CpuFeatures f = avx2Host();
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = f.os_zmm_state = true;
  return f;
}

CpuFeatures avx512Bf16Host() {
  CpuFeatures f = avx512Host();
  f.avx512_bf16 = f.avx512_vnni = true;
  return f;
}

CpuFeatures amxHost() {
  CpuFeatures f = avx512Bf16Host();
  f.amx_tile = f.amx_bf16 = f.os_tile_state = true;
  f.tile_permission = {.requested = true, .error = 0};
  return f;
}

TEST(Isa, NamesRoundTrip) {
  for (Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::AmxEmulated, Isa::Amx})
    EXPECT_EQ(parseIsa(toString(isa)), isa);
  EXPECT_EQ(toString(Isa::Avx512Bf16), "avx512-bf16");
  EXPECT_EQ(parseIsa("avx512bf16"), std::nullopt);
  EXPECT_EQ(parseIsa("sse4"), std::nullopt);
}

TEST(Isa, BestIsTheHighestCompleteLevel) {
  EXPECT_EQ(bestIsa(CpuFeatures{}), std::nullopt);
  EXPECT_EQ(bestIsa(avx2Host()), Isa::Avx2);
  EXPECT_EQ(bestIsa(avx512Host()), Isa::Avx512);
  EXPECT_EQ(bestIsa(avx512Bf16Host()), Isa::Avx512Bf16);
  EXPECT_EQ(bestIsa(amxHost()), Isa::Amx);
}

// Emulated AMX is vector code: it needs avx512-bf16, not AMX, and auto never picks it.
TEST(Isa, AmxEmulatedNeedsOnlyTheVectorLevels) {
  EXPECT_TRUE(avx512Bf16Host().has(Isa::AmxEmulated));
  EXPECT_FALSE(avx512Host().has(Isa::AmxEmulated));
  EXPECT_FALSE(avx512Bf16Host().has(Isa::Amx));
  std::string error;
  EXPECT_EQ(resolveIsa(Isa::AmxEmulated, avx512Bf16Host(), &error), Isa::AmxEmulated) << error;
  EXPECT_EQ(bestIsa(avx512Bf16Host()), Isa::Avx512Bf16);
}

TEST(Isa, LevelsNeedEveryPart) {
  CpuFeatures no_fma = avx2Host();
  no_fma.fma = false;
  EXPECT_FALSE(no_fma.has(Isa::Avx2));

  CpuFeatures no_bw = avx512Host();
  no_bw.avx512bw = false;
  EXPECT_EQ(bestIsa(no_bw), Isa::Avx2);

  CpuFeatures amx_without_bf16_tiles = amxHost();
  amx_without_bf16_tiles.amx_bf16 = false;
  EXPECT_EQ(bestIsa(amx_without_bf16_tiles), Isa::Avx512Bf16);
}

TEST(Isa, LevelsNeedTheOsToSaveTheirRegisters) {
  CpuFeatures no_zmm_state = avx512Bf16Host();
  no_zmm_state.os_zmm_state = false;
  EXPECT_EQ(bestIsa(no_zmm_state), Isa::Avx2);

  CpuFeatures no_tile_state = amxHost();
  no_tile_state.os_tile_state = false;
  EXPECT_EQ(bestIsa(no_tile_state), Isa::Avx512Bf16);

  CpuFeatures no_ymm_state = avx2Host();
  no_ymm_state.os_ymm_state = false;
  EXPECT_EQ(bestIsa(no_ymm_state), std::nullopt);
}

TEST(Isa, LevelsImplyTheOnesBelow) {
  CpuFeatures amx_only = CpuFeatures{};
  amx_only.amx_tile = amx_only.amx_bf16 = amx_only.os_tile_state = true;
  amx_only.tile_permission = {.requested = true, .error = 0};
  EXPECT_FALSE(amx_only.has(Isa::Amx));
}

TEST(Isa, AutoResolvesToTheBest) {
  std::string error;
  EXPECT_EQ(resolveIsa(std::nullopt, avx512Bf16Host(), &error), Isa::Avx512Bf16);
  EXPECT_EQ(resolveIsa(std::nullopt, avx2Host(), &error), Isa::Avx2);
  EXPECT_TRUE(error.empty());
}

TEST(Isa, RequestAtOrBelowTheHostIsKept) {
  std::string error;
  EXPECT_EQ(resolveIsa(Isa::Avx2, amxHost(), &error), Isa::Avx2);
  EXPECT_EQ(resolveIsa(Isa::Avx512, avx512Host(), &error), Isa::Avx512);
  EXPECT_TRUE(error.empty());
}

TEST(Isa, RequestAboveTheHostIsAnErrorNamingIt) {
  std::string error;
  EXPECT_EQ(resolveIsa(Isa::Avx512, avx2Host(), &error), std::nullopt);
  EXPECT_EQ(error, "--isa avx512: this host lacks avx512 (has: avx2, fma)");

  EXPECT_EQ(resolveIsa(Isa::Amx, avx512Bf16Host(), &error), std::nullopt);
  EXPECT_NE(error.find("--isa amx: CPU lacks amx-tile (has: "), std::string::npos) << error;
}

// Every combination of CPU bits, XCR0 tile state and the permission syscall's
// outcome: AMX runs only with all of them, and the first missing one is named.
TEST(Isa, AmxNeedsCpuBitsTileStateAndPermission) {
  const TilePermission not_asked{}, granted{.requested = true, .error = 0},
      refused{.requested = true, .error = EPERM};
  for (bool tile : {false, true})
    for (bool bf16 : {false, true})
      for (bool state : {false, true})
        for (TilePermission permission : {not_asked, granted, refused}) {
          CpuFeatures f = avx512Bf16Host();
          f.amx_tile = tile;
          f.amx_bf16 = bf16;
          f.os_tile_state = state;
          f.tile_permission = permission;
          std::string expected;
          if (!tile) expected = "CPU lacks amx-tile";
          else if (!bf16) expected = "CPU lacks amx-bf16";
          else if (!state) expected = "the OS does not enable the AMX tile state (XCR0 bits 17-18)";
          else if (!permission.requested) expected = "XTILEDATA permission was not requested";
          else if (permission.error) expected = "the kernel refused XTILEDATA permission: Operation not permitted";
          const auto label = ::testing::Message() << tile << bf16 << state << permission.requested << permission.error;
          EXPECT_EQ(amxUnavailableReason(f).value_or(""), expected) << label;
          EXPECT_EQ(f.has(Isa::Amx), expected.empty()) << label;
          std::string error;
          EXPECT_EQ(resolveIsa(Isa::Amx, f, &error).has_value(), expected.empty()) << label;
          if (!expected.empty()) {
            EXPECT_EQ(error.rfind("--isa amx: " + expected, 0), 0u) << error;
          }
        }
}

TEST(Isa, RequestBlockedByTheOsSaysSo) {
  CpuFeatures no_zmm_state = avx512Host();
  no_zmm_state.os_zmm_state = false;
  std::string error;
  EXPECT_EQ(resolveIsa(Isa::Avx512, no_zmm_state, &error), std::nullopt);
  EXPECT_NE(error.find("OS does not enable"), std::string::npos) << error;
}

TEST(Isa, NoAvx2MeansNoLevel) {
  std::string error;
  EXPECT_EQ(resolveIsa(std::nullopt, CpuFeatures{}, &error), std::nullopt);
  EXPECT_NE(error.find("avx2"), std::string::npos) << error;
  EXPECT_NE(error.find("has: none"), std::string::npos) << error;
  EXPECT_EQ(resolveIsa(Isa::Avx2, CpuFeatures{}, &error), std::nullopt);
  EXPECT_EQ(error, "--isa avx2: this host lacks avx2 (has: none)");
  EXPECT_EQ(resolveIsa(std::nullopt, CpuFeatures{}, nullptr), std::nullopt);  // error is optional
}

TEST(Isa, FlagNamesListPresentFlags) {
  EXPECT_TRUE(CpuFeatures{}.flagNames().empty());
  EXPECT_EQ(avx2Host().flagNames(), (std::vector<std::string>{"avx2", "fma"}));
  const std::vector<std::string> amx = amxHost().flagNames();
  EXPECT_NE(std::find(amx.begin(), amx.end(), "amx_tile"), amx.end());
  EXPECT_NE(std::find(amx.begin(), amx.end(), "avx512_bf16"), amx.end());
}

// This host: whatever it has must be self-consistent.
TEST(Isa, DetectionOnThisHostIsConsistent) {
  const CpuFeatures host = detectCpuFeatures();
  EXPECT_FALSE(host.vendor.empty());
  const std::optional<Isa> best = bestIsa(host);
  if (best) {
    EXPECT_TRUE(host.has(*best));
    EXPECT_TRUE(host.has(Isa::Avx2));
  }
  // The permission is only asked for where the CPU and OS allow AMX (never here without AMX).
  EXPECT_EQ(host.tile_permission.requested, host.amx_tile && host.amx_bf16 && host.os_tile_state);
  if (host.avx512f) {
    EXPECT_TRUE(host.avx2);
  }
  std::string error;
  EXPECT_EQ(resolveIsa(std::nullopt, host, &error), best);
}

}  // namespace
}  // namespace nkbench
