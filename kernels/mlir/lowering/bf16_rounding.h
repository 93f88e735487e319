// Rounding f32 to bf16 on hosts without avx512-bf16, where LLVM would call a
// library function per element: integer arithmetic in the kernel instead,
// equal to toBFloat16 (operands/bf16.h) bit for bit: round to nearest even,
// denormals kept, a NaN made quiet with its sign and kept payload.
#pragma once

#include "mlir/IR/PatternMatch.h"

namespace nkbench::mlir_backend {

// arith.truncf f32 -> bf16 as integer ops that select a NaN's bits on the
// f32 lanes, before rounding (upstream's expansion selects on the bf16 result,
// which LLVM scalarises on x86 without avx512-bf16: a mask shift, a test and a
// cmov per lane), plus upstream's expansion of arith.extf bf16 -> f32.
void populateBf16RoundingPatterns(mlir::RewritePatternSet& patterns);

}  // namespace nkbench::mlir_backend
