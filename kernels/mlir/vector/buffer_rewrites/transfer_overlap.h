// Vector transfers of a buffer at the buffer's own indices, and whether two of
// them may touch the same elements.
#pragma once

#include <cstdint>
#include <optional>

#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/VectorInterfaces.h"

namespace nkbench::mlir_backend {

// Folds subviews into the transfers that use them, so that a transfer's base is
// the buffer itself and its indices are the buffer's. (Upstream's folding leaves
// a transfer that may be out of bounds on its subview.) Throws Error if the
// folding does not converge.
void foldSubviewsIntoTransfers(mlir::Operation* root);

// Where an index lies, both ends included: a constant, the induction variable
// of an scf.for with constant bounds, or sums, and products and floor
// divisions by positive constants, of such (arith.addi, affine.apply).
struct IndexRange {
  std::int64_t lo = 0, hi = 0;
};
std::optional<IndexRange> rangeOf(mlir::Value index);

// The elements a transfer may touch, in the buffer under its subviews (unit
// strides, no rank reduction): per buffer dimension, the range of its first
// index where known, and the vector's extent (masks and bounds not counted).
struct TransferSpan {
  mlir::Value buffer;
  llvm::SmallVector<std::optional<IndexRange>, 4> first;
  llvm::SmallVector<std::int64_t, 4> extent;
};
TransferSpan spanOf(mlir::VectorTransferOpInterface transfer);

// False only where both are in one buffer and some dimension has known,
// disjoint ranges (as the unrolled bands of one block, or blocks of different
// loops, have); otherwise they may. A loop's induction variable stands for all
// its iterations: two transfers in one loop are compared over the whole loop.
// Both transfers use minor identity maps: their vector dims are the trailing dims.
bool mayOverlap(const TransferSpan& a, const TransferSpan& b);
inline bool mayOverlap(mlir::VectorTransferOpInterface a, mlir::VectorTransferOpInterface b) {
  return mayOverlap(spanOf(a), spanOf(b));
}

}  // namespace nkbench::mlir_backend
