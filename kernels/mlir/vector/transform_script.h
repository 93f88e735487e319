// The schedule as transform-dialect IR: register-block tiling, nanokernel
// composition and accumulator hoisting, generated from a RegisterBlockPlan.
#pragma once

#include <string>
#include <vector>

#include "harness/core/problem.h"
#include "kernels/mlir/vector/register_block_plan.h"

namespace nkbench::mlir_backend {

enum class Lowering {
  // Register blocks split into 1 x lanes contractions, fully unrolled and
  // rewritten by the x86vector patterns into nanokernels: broadcast + FMA (f32),
  // broadcast of a bf16 pair + vdpbf16ps (bf16).
  Nanokernel,
  // The same tiling, unrolling and hoisting, but the 1 x lanes contractions are
  // left to upstream's generic vector.contract lowering (lowering/vector_lowering.h)
  // instead of the x86vector nanokernel rewrite: isolates the rewrite's effect.
  GenericVector,
};

// What the compiler applies to the payload after one of the script's sequences:
// canonicalization with these pattern groups (and the reads' sinking), then CSE. As transform.apply_patterns,
// it would gather every dialect's canonicalization patterns on each run (as costly
// as applying them) and simplify regions, which finds nothing in a kernel of
// structured loops (schedule_cleanups.h).
struct ScheduleCleanup {
  bool fold_tensor_subsets = false;    // tensor slices folded into the transfers that read and write them
  bool fold_arith_extension = false;   // bf16: the widening to f32 folded into the contraction
  bool sink_vector_producers = false;  // each operand's read moved next to its nanokernel (read_sinking.h)
  bool lower_multi_reduction = false;  // a split reduction's partial sums added lane-parallel
  // "... + canonicalization, [then tensor reads sunk ...,] then CSE", as the
  // script's comments name it.
  std::string describe() const;
};

struct TransformSchedule {
  // A `module attributes {transform.with_named_sequence}` holding the sequences,
  // each with a comment that names the clean-up after it.
  std::string script;
  struct Step {
    std::string sequence;  // entry point for the transform interpreter
    ScheduleCleanup cleanup;
  };
  std::vector<Step> steps;  // in order
};

TransformSchedule buildTransformSchedule(const Problem& brgemm, const RegisterBlockPlan& plan, Lowering lowering);

}  // namespace nkbench::mlir_backend
