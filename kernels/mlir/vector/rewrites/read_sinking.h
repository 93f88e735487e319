// Each tensor read moved down to just before its first user, as the schedule's
// last clean-up asks (ScheduleCleanup::sink_vector_producers): the nanokernel's
// loads then sit next to the FMAs or dot products that take them, which keeps
// their live ranges, and the registers LLVM must find for them, short.
//
// MLIR's x86vector sink_vector_producer_ops pattern does this inside the greedy
// rewrite, a move at a time, and its fixed point depends on the order it visits
// reads that share a user (such as a K loop's accumulators): the same kernel
// came out with its loads in different orders from run to run. This walk is
// one pass in program order, so reads that share their first user keep their
// order and the same schedule always gives the same machine code.
#pragma once

#include <cstdint>

#include "mlir/IR/Operation.h"

namespace nkbench::mlir_backend {

// Moves every vector.transfer_read of a tensor under `root` to just before the
// first op after it in its block that uses it. A read stays where it is when an
// op before that user uses it inside one of its regions (moved past it, the
// read would no longer dominate that use), or writes into the tensor it reads
// (a destination-style op such as a transfer_write or insert_slice into it:
// bufferized, the read would then need a copy of the tensor); so does a read
// whose users all lie in other blocks. Returns the number of reads moved.
std::int64_t sinkTensorReadsToFirstUse(mlir::Operation* root);

}  // namespace nkbench::mlir_backend
