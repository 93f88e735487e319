// The schedule as transform-dialect IR: register-block tiling, nanokernel
// composition and accumulator hoisting, generated from a RegisterBlockPlan.
#pragma once

#include <string>

#include "harness/core/problem.h"
#include "kernels/mlir/vector/register_block_plan.h"

namespace nkbench::mlir_backend {

enum class Lowering {
  // Register blocks split into 1 x lanes contractions, fully unrolled and
  // rewritten by the x86vector patterns into nanokernels: broadcast + FMA (f32),
  // broadcast of a bf16 pair + vdpbf16ps (bf16).
  Nanokernel,
  // The same tiling, unrolling and hoisting, but the 1 x lanes contractions are
  // left to upstream's generic vector.contract lowering (convert-vector-to-llvm)
  // instead of the x86vector nanokernel rewrite: isolates the rewrite's effect.
  GenericVector,
};

// A `module attributes {transform.with_named_sequence}` holding @__transform_main.
std::string buildTransformScript(const Problem& brgemm, const RegisterBlockPlan& plan, Lowering lowering);

}  // namespace nkbench::mlir_backend
