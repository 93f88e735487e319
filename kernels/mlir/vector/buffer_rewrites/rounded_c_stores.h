// A bf16 C rounded at its accumulators' stores, in registers. The payload sums
// a bf16 C in f32 on the stack (payload_ir.h: kCSumBuffer), widens C into that
// sum first under beta 1, and rounds the sum into C after all blocks: two more
// passes over C, through the stack. Where the kernel runs its whole batch in one
// pass over C, each register block reads its accumulators once and stores them
// once, after its last read, and blocks cover disjoint parts of C; the rewrite
// checks that no read may see a store. Then the reads take C widened, the
// stores C rounded, and the sum on the stack goes, with the passes that filled
// and rounded it.
// Inserted after bufferization (and after a fused epilogue, whose stores it
// then rounds), where the sum's reads and writes are vector transfers.
#pragma once

#include <cstdint>
#include <string>

#include "mlir/IR/BuiltinOps.h"

namespace nkbench::mlir_backend {

struct RoundedCStores {
  bool bf16_c = false;              // the kernel has a bf16 C's f32 sum
  bool applied = false;             // false: C is still rounded from the sum on the stack
  std::string kept_because;         // why not, where not
  std::int64_t rounded_stores = 0;  // accumulator stores now rounded into C
  std::int64_t widened_reads = 0;   // accumulator reads now widened from C (beta 1)
  std::string summary() const;      // for the row's nanokernel evidence ("" without a bf16 C)
};

struct RoundingRoute {
  // The plan runs the whole batch in one pass over C (no batch chunks, no
  // reduction split): what makes each block's stores its last.
  bool one_pass = false;
  // The target rounds f32 to bf16 in one instruction (avx512-bf16). Elsewhere
  // the rounding is a dozen integer ops per vector (bf16_rounding.h): inline
  // at every store, they cost more to compile (+31% for 32^3 b32 beta 1 on
  // AVX-512, most in LLVM's instruction selection) than the stack's round
  // trip costs to run, so the sum stays and is rounded in one loop.
  bool native_rounding = false;
};

// Without both, the kernel keeps the sum; also where a read of the sum or of C
// may see one of the sum's stores, after it in one iteration or in a later
// iteration of a loop around both (by index ranges: transfer_overlap.h), where
// the sum has other users than transfers and subviews, or where a read's
// padding is neither zero nor poison.
RoundedCStores roundCAtItsStores(mlir::ModuleOp module, const RoundingRoute& route);

}  // namespace nkbench::mlir_backend
