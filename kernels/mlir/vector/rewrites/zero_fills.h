// C's zero fill (beta 0) where the register blocks can take it: in registers.
//
// Producer fusion brings a fill into a register block's loop when the fill is
// the block's destination, so that the accumulators start as zeros. Splitting C
// into row bands and column panels first hides the fill: a piece's destination
// is then a slice of the fill, or, for every piece after the first, a slice of
// the tensor the earlier pieces were inserted into. Before tiling, a pass
// - puts a fill on every slice whose elements all come from a fill (past
//   inserts that miss it), so that each piece's destination is a fill again;
//   the slice stays the fill's destination, as in-place bufferization needs;
// - removes a fill whose elements no op reads: they reach only fills'
//   destinations, slices no op reads, and one chain of inserts that covers
//   them (the split pieces overwrite all of C: no memset of C).
// After vectorization and hoisting, the same pass
// - turns a read of a splat written over a whole tensor into the splat, where
//   the read's padding is the splat's value, also past writes of the tensor
//   the read provably misses (a fully unrolled block writes C row by row):
//   accumulators, masked ones too, start as zeros in registers, not as loads
//   of the fill;
// - removes such a splat write when its value then passes only through writes
//   and inserts at constant places that cover the tensor, and through loops
//   that carry it untouched (a block's zeros, overwritten by its stores).
#pragma once

namespace nkbench::mlir_backend {

inline constexpr const char* kZeroFillsPass = "nkbench-zero-fills-into-pieces";

// Registers the pass under kZeroFillsPass, once per process.
void registerZeroFillsPass();

}  // namespace nkbench::mlir_backend
