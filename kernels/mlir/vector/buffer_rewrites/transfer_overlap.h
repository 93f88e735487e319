// Which elements of a buffer a vector transfer may touch, read from its
// indices through subviews, and whether two transfers may touch the same ones:
// at once, or in different iterations of a loop around both.
#pragma once

#include <cstdint>
#include <optional>

#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/VectorInterfaces.h"

namespace nkbench::mlir_backend {

// Where an index lies, both ends included.
struct IndexRange {
  std::int64_t lo = 0, hi = 0;
};

// An index as `per_iv * iv + rest`, for the induction variable iv of one loop:
// every other loop's induction variable counted over its whole range. Indices
// of constants, induction variables of scf.for loops with constant bounds,
// and sums, and products and floor divisions by positive constants, of such
// (arith.addi, affine.apply); nullopt for any other.
struct LinearIndex {
  std::int64_t per_iv = 0;
  IndexRange rest;
};
std::optional<LinearIndex> linearIndexOf(mlir::Value index, mlir::scf::ForOp loop = {});

// The elements a transfer may touch, in the buffer under its subviews (unit
// strides, no rank reduction): per buffer dimension, its first index where
// known, and the vector's extent (masks and bounds not counted). A transfer
// whose map is not a minor identity has no dimension known.
struct TransferSpan {
  mlir::Value buffer;
  llvm::SmallVector<std::optional<LinearIndex>, 4> first;
  llvm::SmallVector<std::int64_t, 4> extent;
};
// `loop`: the loop whose induction variable is kept apart (per_iv); without
// one every induction variable counts over its whole range.
TransferSpan spanOf(mlir::VectorTransferOpInterface transfer, mlir::scf::ForOp loop = {});

// In one iteration of every loop around them: false only where both are in one
// buffer and some dimension has known, disjoint ranges (as the unrolled bands
// of one block, or blocks of different loops, have); otherwise they may.
bool mayOverlap(const TransferSpan& a, const TransferSpan& b);
inline bool mayOverlap(mlir::VectorTransferOpInterface a, mlir::VectorTransferOpInterface b) {
  return mayOverlap(spanOf(a), spanOf(b));
}

// Whether `later` in an iteration of `loop` after the one of `earlier` may
// touch what `earlier` did (spans taken with spanOf(..., loop)): false where
// some dimension moves with the loop, equally for both, by at least the
// distance from `later`'s lowest to `earlier`'s highest element in one
// iteration (as the row blocks of a band loop do).
bool mayOverlapAcrossIterations(const TransferSpan& earlier, const TransferSpan& later, mlir::scf::ForOp loop);

}  // namespace nkbench::mlir_backend
