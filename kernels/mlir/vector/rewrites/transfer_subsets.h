#pragma once

// vector.transfer_read/write as subsets of the tensors they read and write, for
// subset hoisting and one-shot bufferization. Two transfers whose offsets are
// each one value plus a constant (a register block's accumulators: the block's
// origin plus a row and a column) are related by interval arithmetic; others
// fall back to MLIR's value-bounds analysis, which decides the same questions but
// builds a constraint system per pair of the (accumulators^2 x hoisted pairs) it
// is asked: half the time of a kernel's schedule.

#include <cstdint>
#include <optional>

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace nkbench::mlir_backend {

enum class SliceRelation { Equal, Disjoint, Overlapping, Unknown };

// How two unit-stride slices of one tensor relate when each offset is read as
// `value + constant`; Unknown where some dimension has different values and no
// other dimension separates the slices.
SliceRelation relateSlices(const mlir::HyperrectangularSlice& a, const mlir::HyperrectangularSlice& b);

// Registers the subset models of vector.transfer_read and vector.transfer_write
// (in place of MLIR's, which have no interval fast path).
void registerTransferSubsetModels(mlir::DialectRegistry& registry);

}  // namespace nkbench::mlir_backend
