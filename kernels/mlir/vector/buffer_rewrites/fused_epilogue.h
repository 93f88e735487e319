// The epilogue of an mlp layer's block kernel (bias add, ReLU) fused into the
// stores of its accumulators, in registers, before C is written. Inserted
// after bufferization, where the kernel's stores of C are vector transfers of
// the reduction's results into C (f32), or into the f32 sum on the stack that
// a bf16 C is rounded from (kCSumBuffer). A kernel with an epilogue runs its
// whole batch in one pass over C (register_block_plan.h), so each store of a
// computed value is the block's last: it takes
//     max(sum + bias[columns of the store], 0)
// the bias read as one vector per store, within the store's own bounds (a
// masked or out-of-bounds edge store reads the bias the same way). Stores of a
// constant (the zero a block starts from) are left alone.
#pragma once

#include <cstdint>
#include <string>

#include "harness/core/problem.h"
#include "mlir/IR/BuiltinOps.h"

namespace nkbench::mlir_backend {

struct FusedEpilogue {
  std::string epilogue;          // "bias+relu", "bias", "relu"
  std::int64_t fused_stores = 0;   // stores of accumulators that took the epilogue
  // Reads of C after a fused store, in its block, that may see what it wrote: a
  // second pass (0). (Where the target rounds natively, a bf16 C is then rounded
  // at these stores: rounded_c_stores.h.)
  std::int64_t reads_after = 0;
  std::string summary() const;     // for the row's nanokernel evidence
};

// Throws Error when the kernel's stores of C are not in a form the epilogue
// can be fused into (none found, or a store it cannot read the bias for).
FusedEpilogue fuseEpilogue(mlir::ModuleOp module, const MlpLayers& epilogue);

}  // namespace nkbench::mlir_backend
