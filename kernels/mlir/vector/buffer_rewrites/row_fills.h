// A fill of a whole buffer as a loop over its rows. Where C's blocks cannot
// start from zeros in registers (beta 0 with the batch in chunks: every chunk
// adds to C), vectorization leaves C's fill as one transfer_write of a splat
// over all of C, and the lowering unrolls that into straight-line code: 256
// stores for a 64x64 C, which LLVM took about 8 ms to compile (its -O3 made a
// memset of them again). Rewritten after bufferization, the fill is a loop of
// one row's stores. Fills of anything less than a whole rank-2 buffer of its
// own (a register block's fill, a view) are left as they are.
#pragma once

#include <cstdint>

#include "mlir/IR/BuiltinOps.h"

namespace nkbench::mlir_backend {

// Returns the number of fills rewritten.
std::int64_t rollWholeBufferFills(mlir::ModuleOp module);

}  // namespace nkbench::mlir_backend
