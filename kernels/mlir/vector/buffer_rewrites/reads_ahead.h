// Reads of C ahead of the writes they miss.
//
// A fully unrolled block (one K step, one batch entry) reads and writes C row
// by row: each row's read comes after the write of the row before. Where C's
// rows are narrower than a vector, their masked transfers share cache lines,
// and the processor holds each load until the stores before it that touch its
// whole span (masked lanes too) have left: a stall per row. Rewritten after
// bufferization, a read of a buffer moves up past the writes of that buffer
// just before it that provably miss its elements (transfer_overlap.h), and
// past ops that touch no memory or only read it, to just ahead of the
// earliest such write; never past an op that makes one of its operands, or
// one that may write what it reads.
#pragma once

#include <cstdint>

#include "mlir/IR/BuiltinOps.h"

namespace nkbench::mlir_backend {

// Returns the number of reads moved.
std::int64_t moveReadsAheadOfMissedWrites(mlir::ModuleOp module);

}  // namespace nkbench::mlir_backend
