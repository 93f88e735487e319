#include "operands/bf16.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nkbench {

BFloat16 roundToBFloat16(double value) {
  if (std::isnan(value)) return toBFloat16(static_cast<float>(value));
  if (value == 0.0 || std::isinf(value)) return toBFloat16(static_cast<float>(value));
  // bf16 keeps 8 significant bits down to 2^-126 and a fixed 2^-133 step below.
  constexpr int kSignificandBits = 8;
  constexpr int kSmallestExponent = -133;
  int exponent = 0;
  std::frexp(value, &exponent);  // value = f * 2^exponent, 0.5 <= |f| < 1
  const int quantum = std::max(exponent - kSignificandBits, kSmallestExponent);
  // Exact scaling, then rint in the default mode: round to nearest, ties to even.
  const double rounded = std::ldexp(std::rint(std::ldexp(value, -quantum)), quantum);
  // Rounded past the largest bf16 (to 2^128): infinity, as hardware gives.
  if (std::abs(rounded) >= 0x1p128) return toBFloat16(std::copysign(std::numeric_limits<float>::infinity(), value));
  return toBFloat16(static_cast<float>(rounded));  // exact: every bf16 is a float
}

void toBFloat16(const float* in, std::size_t n, BFloat16* out) {
  std::transform(in, in + n, out, [](float value) { return toBFloat16(value); });
}

void toFloat(const BFloat16* in, std::size_t n, float* out) {
  std::transform(in, in + n, out, [](BFloat16 value) { return toFloat(value); });
}

}  // namespace nkbench
