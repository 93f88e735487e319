// A register block's stores of its accumulators as one store of the block.
//
// Hoisted out of the reduction, a block's accumulators are written back one
// vector at a time: a chain of transfer_writes, each into the tensor the one
// before returned. One-shot bufferization asks of every write in such a chain
// whether a read along the chain conflicts with it, walking the chain each
// time: cubic in the block's vectors, 7 ms of a 64x64 kernel's compile for
// 16 accumulators. Where the chain's writes are static, in bounds, apart from
// one another and together cover their whole tensor, they are one write of
// the whole tensor (the vectors put in place with insert_strided_slice), which
// reads nothing of its destination and leaves the analysis nothing to walk.
// Bufferized, the whole write is split into the chain's writes again, in their
// order: the lowering then sees the stores it would have seen (one whole row
// per store would differ in width from the reads of C, and LLVM could no
// longer keep those accumulators in registers across an outer loop).
#pragma once

#include <cstdint>

#include "mlir/IR/BuiltinOps.h"

namespace nkbench::mlir_backend {

// Before bufferization. Returns the number of chains merged.
std::int64_t mergeCoveringWriteChains(mlir::ModuleOp module);

// After bufferization: every merged write to a buffer as its pieces' writes.
// Returns the number of writes split.
std::int64_t splitMergedWrites(mlir::ModuleOp module);

}  // namespace nkbench::mlir_backend
