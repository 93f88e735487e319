#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "operands/bf16.h"

namespace nkbench {
namespace {

float floatFromBits(std::uint32_t bits) { return std::bit_cast<float>(bits); }
std::uint16_t roundedBits(float value) { return toBFloat16(value).bits; }
std::uint16_t roundedBitsOf(std::uint32_t float_bits) { return roundedBits(floatFromBits(float_bits)); }

// Usable in constant expressions: bf16 constants can be built at compile time.
static_assert(toBFloat16(1.0f).bits == 0x3f80);
static_assert(toFloat(BFloat16{0xc040}) == -3.0f);

TEST(BFloat16, RepresentableValuesConvertUnchanged) {
  EXPECT_EQ(roundedBits(1.0f), 0x3f80);
  EXPECT_EQ(roundedBits(-2.0f), 0xc000);
  EXPECT_EQ(roundedBits(0.5f), 0x3f00);
  EXPECT_EQ(roundedBits(255.0f), 0x437f);  // 8 significant bits: still exact
  EXPECT_EQ(roundedBits(0.0f), 0x0000);
  EXPECT_EQ(roundedBits(-0.0f), 0x8000);
}

// bf16 keeps 7 mantissa bits: near 1 the ulp is 2^-7, so 2^-8 is half an ulp.
TEST(BFloat16, TiesRoundToEven) {
  EXPECT_EQ(roundedBits(1.0f + 0x1p-8f), 0x3f80);            // between 0x3f80 (even) and 0x3f81
  EXPECT_EQ(roundedBits(1.0f + 3 * 0x1p-8f), 0x3f82);        // between 0x3f81 and 0x3f82 (even)
  EXPECT_EQ(roundedBits(-(1.0f + 0x1p-8f)), 0xbf80);
  EXPECT_EQ(roundedBits(-(1.0f + 3 * 0x1p-8f)), 0xbf82);
  EXPECT_EQ(roundedBitsOf(0x40a08000), 0x40a0);  // 5.0 + half an ulp
}

TEST(BFloat16, NonTiesRoundToNearest) {
  EXPECT_EQ(roundedBits(1.0f + 3 * 0x1p-9f), 0x3f81);  // 3/4 ulp: up
  EXPECT_EQ(roundedBits(1.0f + 0x1p-9f), 0x3f80);      // 1/4 ulp: down
  EXPECT_EQ(roundedBitsOf(0x3f808001), 0x3f81);        // just past the tie
  EXPECT_EQ(roundedBitsOf(0x3f807fff), 0x3f80);        // just short of it
  EXPECT_EQ(roundedBitsOf(0xbf808001), 0xbf81);        // the same for negatives
  EXPECT_EQ(roundedBitsOf(0x3fffffff), 0x4000);        // carries into the exponent: 2.0
}

TEST(BFloat16, InfinitiesArePreserved) {
  EXPECT_EQ(roundedBits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(roundedBits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(toFloat(BFloat16{0x7f80}), std::numeric_limits<float>::infinity());
  EXPECT_EQ(toFloat(BFloat16{0xff80}), -std::numeric_limits<float>::infinity());
}

// The largest bf16 is 0x7f7f (about 3.39e38); from half an ulp above it, RNE gives inf.
TEST(BFloat16, OverflowRoundsToInfinity) {
  EXPECT_EQ(roundedBits(FLT_MAX), 0x7f80);
  EXPECT_EQ(roundedBits(-FLT_MAX), 0xff80);
  EXPECT_EQ(roundedBitsOf(0x7f7f8000), 0x7f80);  // the tie: 0x7f7f is odd, so up, to inf
  EXPECT_EQ(roundedBitsOf(0x7f7f7fff), 0x7f7f);  // below the tie: the largest finite bf16
  EXPECT_EQ(roundedBitsOf(0xff7f7fff), 0xff7f);
}

TEST(BFloat16, NaNStaysAQuietNaN) {
  const auto expectQuietNaN = [](std::uint32_t float_bits, std::uint16_t expected) {
    const BFloat16 rounded = toBFloat16(floatFromBits(float_bits));
    EXPECT_EQ(rounded.bits, expected) << std::hex << float_bits;
    EXPECT_TRUE(std::isnan(toFloat(rounded))) << std::hex << float_bits;
  };
  expectQuietNaN(std::bit_cast<std::uint32_t>(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  expectQuietNaN(0xffc00000, 0xffc0);  // the sign is kept
  expectQuietNaN(0x7f800001, 0x7fc0);  // payload only in the dropped bits: not inf
  expectQuietNaN(0x7fa00000, 0x7fe0);  // signalling: the kept payload stays, made quiet
  expectQuietNaN(0x7fffffff, 0x7fff);  // all ones: no carry into the sign
  expectQuietNaN(0xffffffff, 0xffff);
}

// The smallest bf16 denormal is 2^-133 (0x0001); denormals are rounded, not flushed.
TEST(BFloat16, DenormalsRoundWithoutFlushing) {
  EXPECT_EQ(toFloat(BFloat16{0x0001}), 0x1p-133f);
  EXPECT_EQ(roundedBitsOf(0x00010000), 0x0001);
  EXPECT_EQ(roundedBitsOf(0x00008001), 0x0001);
  EXPECT_EQ(roundedBitsOf(0x00008000), 0x0000);  // tie, to even zero
  EXPECT_EQ(roundedBitsOf(0x00018000), 0x0002);  // tie, to even 0x0002
  EXPECT_EQ(roundedBits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(roundedBits(-std::numeric_limits<float>::denorm_min()), 0x8000);  // -0: sign kept
  EXPECT_EQ(roundedBitsOf(0x007fffff), 0x0080);  // the largest float denormal rounds up to FLT_MIN
  EXPECT_EQ(toFloat(BFloat16{0x0080}), FLT_MIN);
}

// Widening is exact for all 65536 patterns, and rounding the result gives the
// pattern back; the only exception is a signalling NaN, which comes back quiet.
TEST(BFloat16, EveryPatternRoundTripsThroughFloat) {
  int signalling_nans = 0;
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    const BFloat16 value{static_cast<std::uint16_t>(pattern)};
    const float widened = toFloat(value);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(widened), pattern << 16) << std::hex << pattern;
    const bool signalling = std::isnan(widened) && (pattern & 0x0040) == 0;
    signalling_nans += signalling;
    const std::uint32_t expected = signalling ? pattern | 0x0040 : pattern;
    ASSERT_EQ(toBFloat16(widened).bits, expected) << std::hex << pattern;
  }
  EXPECT_EQ(signalling_nans, 2 * 63);  // payloads 0x01..0x3f, both signs
}

// Rounding as the definition states it: of the two bf16 neighbours, the nearer,
// and on a tie the one with an even last bit. Finite inputs only.
std::uint16_t nearestEvenOracle(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = bits & 0x80000000u;
  const std::uint32_t below = bits & 0x7fff0000u;  // magnitude truncated to bf16
  const std::uint32_t above = below + 0x10000u;    // the next bf16 up, inf past the largest
  const double magnitude = std::fabs(double(value));
  const double low = floatFromBits(below);
  // Under an unbounded exponent the neighbour above the largest bf16 is 2^128.
  const double high = above == 0x7f800000u ? std::ldexp(1.0, 128) : double(floatFromBits(above));
  const double to_low = magnitude - low, to_high = high - magnitude;  // exact in double
  const bool up = to_high < to_low || (to_high == to_low && ((below >> 16) & 1u) != 0);
  return static_cast<std::uint16_t>((sign | (up ? above : below)) >> 16);
}

TEST(BFloat16, MatchesTheRoundingDefinitionOnRandomFloats) {
  std::mt19937 random(2024);
  int checked = 0;
  while (checked < (1 << 20)) {
    const float value = floatFromBits(static_cast<std::uint32_t>(random()));
    if (!std::isfinite(value)) continue;
    ASSERT_EQ(roundedBits(value), nearestEvenOracle(value)) << std::hexfloat << value;
    ++checked;
  }
}

TEST(BFloat16, ArrayConversionsMatchTheScalarOnes) {
  const std::vector<float> values = {1.0f + 0x1p-8f, -3.5f, FLT_MAX, 0x1p-140f,
                                     std::numeric_limits<float>::quiet_NaN(), -0.0f};
  BFloat16Buffer narrowed(values.size(), BFloat16{0x1234});
  toBFloat16(values.data(), values.size(), narrowed.data());
  std::vector<float> widened(values.size());
  toFloat(narrowed.data(), narrowed.size(), widened.data());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(narrowed[i], toBFloat16(values[i])) << i;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(widened[i]), std::bit_cast<std::uint32_t>(toFloat(narrowed[i])))
        << i;
  }
}

TEST(BFloat16, EmptyArrayConversionWritesNothing) {
  BFloat16 untouched{0x1234};
  float untouched_float = 7.0f;
  toBFloat16(nullptr, 0, &untouched);
  toFloat(nullptr, 0, &untouched_float);
  EXPECT_EQ(untouched.bits, 0x1234);
  EXPECT_EQ(untouched_float, 7.0f);
}

TEST(BFloat16, BufferIsCacheLineAligned) {
  const BFloat16Buffer buffer(3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 64, 0u);
  EXPECT_EQ(buffer[2].bits, 0);  // value-initialised: +0
}

TEST(BFloat16, RoundingADoubleRoundsOnce) {
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even wins.
  EXPECT_EQ(roundToBFloat16(1.0 + 0x1p-8).bits, 0x3f80);
  // Just above the tie rounds up, although rounding through float would first
  // lose the tiny excess and then see a tie that rounds down.
  EXPECT_EQ(roundToBFloat16(1.0 + 0x1p-8 + 0x1p-40).bits, 0x3f81);
  EXPECT_EQ(toBFloat16(static_cast<float>(1.0 + 0x1p-8 + 0x1p-40)).bits, 0x3f80);
  EXPECT_EQ(roundToBFloat16(-3.0).bits, toBFloat16(-3.0f).bits);
  EXPECT_EQ(roundToBFloat16(0.0).bits, 0x0000);
  EXPECT_EQ(roundToBFloat16(-0.0).bits, 0x8000);
}

TEST(BFloat16, RoundingADoubleHandlesTheRangeEnds) {
  EXPECT_EQ(roundToBFloat16(1e39).bits, 0x7f80);                   // past the largest bf16: inf
  EXPECT_EQ(roundToBFloat16(-1e39).bits, 0xff80);
  EXPECT_EQ(roundToBFloat16(3.3895313892515355e38).bits, 0x7f7f);  // the largest bf16 itself
  EXPECT_EQ(roundToBFloat16(0x1p-133).bits, 0x0001);              // the smallest denormal
  EXPECT_EQ(roundToBFloat16(0x1p-135).bits, 0x0000);              // below half of it: zero
  EXPECT_EQ(roundToBFloat16(std::numeric_limits<double>::infinity()).bits, 0x7f80);
  EXPECT_TRUE(std::isnan(toFloat(roundToBFloat16(std::numeric_limits<double>::quiet_NaN()))));
}

TEST(BFloat16, RoundingADoubleAgreesWithFloatRoundingOnFloats) {
  std::uint64_t state = 7;
  for (int i = 0; i < 100000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const float value = std::bit_cast<float>(static_cast<std::uint32_t>(state >> 32));
    if (std::isnan(value)) continue;
    ASSERT_EQ(roundToBFloat16(double(value)).bits, toBFloat16(value).bits) << value;
  }
}

}  // namespace
}  // namespace nkbench
