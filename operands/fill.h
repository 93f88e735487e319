// Operand data for a problem: exact small integers (default) or random values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/problem.h"

namespace nkbench {

enum class FillMode {
  // Small integers, made sparse along long reductions, so that every partial sum
  // is exactly representable: any summation order gives the same bits.
  ExactInteger,
  // Uniform in [-1, 1): checked against a tolerance derived from K and the type.
  Random,
};

std::string_view toString(FillMode mode);
std::optional<FillMode> parseFillMode(std::string_view text);  // "exact" | "random"

// Values are floats; for bf16 problems every A and B value (and C_init, for a
// bf16 C) is exactly a bf16 (small integers, or random values rounded to bf16),
// to be converted by the caller.
// An mlp (problem.h): a = X, b = every layer's weights, c_init = zeros of all
// outputs, bias = every layer's bias (exact in bf16 too). Its exact fill keeps
// every layer's sums below 2^24 in f32: X nonzero integers in [-8, 8], each
// output summing a few weights in {-2, -1, 1, 2} (as few as the depth needs),
// biases nonzero integers in [-8, 8]. Its random fill scales each layer's
// weights by a power of two near 1/sqrt(C_{l-1}), so that outputs stay near 1.
struct ProblemData {
  FloatBuffer a;       // batch x M x K
  FloatBuffer b;       // batch x K x N
  FloatBuffer c_init;  // M x N: initial C (zeros unless the problem accumulates)
  FloatBuffer bias;    // mlp with biases only
};

// Weights per output of an mlp layer under the exact fill (see above).
std::int64_t exactMlpTermsPerOutput(const Problem& problem);

// Deterministic for a given (problem, mode, seed), independent of thread count.
ProblemData makeProblemData(const Problem& problem, FillMode mode, std::uint64_t seed = 1);

}  // namespace nkbench
