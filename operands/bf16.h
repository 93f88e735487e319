// bfloat16: the top half of an IEEE binary32 (sign, 8 exponent bits, 7 mantissa
// bits). Operands are stored as bits; arithmetic happens in float.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"

namespace nkbench {

struct BFloat16 {
  std::uint16_t bits;

  friend constexpr bool operator==(BFloat16, BFloat16) = default;  // bitwise: NaN == same NaN
};
// Kernels and libraries read these buffers as raw 16-bit words.
static_assert(sizeof(BFloat16) == 2 && std::is_trivially_copyable_v<BFloat16>);

using BFloat16Buffer = AlignedBuffer<BFloat16>;

// Exact: every bfloat16 is a float.
constexpr float toFloat(BFloat16 value) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16);
}

// Round to nearest, ties to even, as hardware conversions (VCVTNEPS2BF16) do:
// denormals are kept, not flushed; values past the largest bfloat16 by half an
// ulp or more become infinity; a NaN stays a NaN of the same sign, made quiet
// (truncating a NaN whose payload sits only in the low 16 bits would give inf).
constexpr BFloat16 toBFloat16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  constexpr std::uint32_t kQuietBit = 0x0040;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return {static_cast<std::uint16_t>((bits >> 16) | kQuietBit)};
  // Adding just under half an ulp, plus one when the kept part is odd, carries
  // into the kept bits exactly when the discarded half rounds up under RNE.
  // The carry may ripple into the exponent: that is the correct rounding, up to inf.
  const std::uint32_t odd = (bits >> 16) & 1u;
  return {static_cast<std::uint16_t>((bits + 0x7fffu + odd) >> 16)};
}

// The bfloat16 nearest to `value` (ties to even), rounded once from the exact
// double: the correctly rounded result a bf16 C must hold. Same rules as above
// for denormals, overflow and NaN. (Rounding through float first could round twice.)
BFloat16 roundToBFloat16(double value);

// Element-wise conversions of n values; the ranges must not overlap.
void toBFloat16(const float* in, std::size_t n, BFloat16* out);
void toFloat(const BFloat16* in, std::size_t n, float* out);

}  // namespace nkbench
