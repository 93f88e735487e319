// Checks a backend's C against the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/core/problem.h"
#include "operands/fill.h"
#include "reference/reference_gemm.h"

namespace nkbench {

enum class VerifyStatus { Passed, Failed, Mistrusted, Skipped, Error };
std::string_view toString(VerifyStatus status);  // "passed", "failed", "mistrusted", "skipped", "error"
std::optional<VerifyStatus> parseVerifyStatus(std::string_view text);

struct Verification {
  VerifyStatus status = VerifyStatus::Failed;
  double max_error = 0.0;          // max |got - ref| (exact fill) or max normalised error (random)
  double tolerance = 0.0;          // 0 for exact fill: results must match bit for bit
  std::int64_t mismatches = 0;
  double reference_zero_fraction = 0.0;
  std::string detail;              // first offending points, or why the result is mistrusted
};

// `got` is C as floats (a bf16 C widened, which is exact).
// Exact fill: every element must equal the reference (NaN never passes); a bf16 C
// must equal the reference correctly rounded to bf16.
// Random fill: |got - ref| <= tolerance * magnitude, the tolerance the smaller
// of fp32's worst-case and probabilistic bounds for K*batch terms; a bf16 C may
// also be off by its final rounding (half a bf16 ulp). Where that band holds
// zero for most outputs (very long reductions), a kernel that wrote zeros would
// pass: Mistrusted.
// A reference with too many zeros cannot tell a kernel that wrote nothing: Mistrusted.
// An mlp is checked layer by layer (every layer's output, each within its own
// sum's tolerance plus lambda times what earlier layers carry in, as the
// reference gives it); after ReLU a layer is mistrusted only where almost all
// its outputs are zero.
Verification verifyResult(const Problem& problem, FillMode mode, const float* got,
                          const ReferenceResult& reference);

// Why a reference cannot tell a kernel that wrote zeros from a correct one, if it cannot.
std::optional<std::string> tooManyReferenceZeros(const Problem& problem, const ReferenceResult& reference);

}  // namespace nkbench
