// C's zero fill (beta 0) where the register blocks can take it: in registers.
//
// Producer fusion brings a fill into a register block's loop when the fill is
// the block's destination, so that the accumulators start as zeros. Splitting C
// into row bands and column panels first hides the fill: a piece's destination
// is then a slice of the fill, or, for every piece after the first, a slice of
// the tensor the earlier pieces were inserted into. Before tiling, a pass
// rewrites those destinations:
//  - a slice of an insert_slice that it does not overlap is a slice of the
//    insert's destination (static offsets and sizes);
//  - a slice of a fill is a fill of the slice (upstream's swap pattern),
// so that each piece's destination is a fill of its own again.
//
// After vectorization and hoisting, a read of a splat write over a whole tensor
// is the splat, where the read's padding is the splat's value: accumulators,
// masked ones included, start as zeros in registers, not as loads of the fill.
// And a fill that the written blocks cover whole is dead: a
// transfer_write of a constant over a whole tensor whose value then passes only
// through transfer_writes and insert_slices at constant offsets that together
// cover it is replaced by the tensor under it. Without this the zeros are still
// stored (a memset of C), and where an edge is written by masked stores nothing
// downstream can tell that the zeros are overwritten.
#pragma once

namespace nkbench::mlir_backend {

inline constexpr const char* kZeroFillsPass = "nkbench-zero-fills-into-pieces";

// Registers the pass under kZeroFillsPass, once per process.
void registerZeroFillsPass();

}  // namespace nkbench::mlir_backend
