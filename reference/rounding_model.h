// How far rounding may move a kernel's result from the reference's on random
// data (--fill random): the constants and scales that the reference (an mlp's
// layers carry their inputs' differences on) and the comparison share.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

namespace nkbench {

constexpr double kFp32UnitRoundoff = double(FLT_EPSILON) / 2;

// Rounding to a bf16 moves a value by at most half a bf16 ulp: 2^-8 of it.
constexpr double kBf16HalfUlp = 0x1p-8;

// Rounding errors that are independent and of mean zero, as they are on random
// data, keep an fp32 sum of n terms within lambda * sqrt(n) * u * sum|terms| of
// the exact sum, except with probability about 2n * exp(-lambda^2 / 2)
// (Higham and Mary, "A new approach to probabilistic rounding error analysis",
// SISC 2019, theorem 3.1). lambda = 12: below 10^-30 per output.
constexpr double kProbabilisticLambda = 12.0;

// sqrt(n) * u: the scale of that error per unit of sum|terms|. Errors of
// independent sums combine as a sum weighted by w has scale sqrt(sum w^2 s^2)
// (their sub-Gaussian scales), and lambda multiplies the final scale once.
inline double sumErrorScale(std::int64_t terms) { return std::sqrt(double(terms)) * kFp32UnitRoundoff; }

}  // namespace nkbench
