// Software prefetch of the next batch entries' A and B, for operands that come
// from memory rather than cache: the hardware prefetchers follow one stream,
// while a BRGEMM block walks the rows of A of every batch entry and the rows of
// B, each entry a jump away. Inserted after bufferization, where the kernel's
// reads of A and B are plain transfers of its arguments:
//  - in blocks of at least 4 rows (fewer stream B faster than prefetches
//    help), before each read of a B vector (one cache line), a prefetch of
//    the same line `distance` entries ahead (or, where an entry takes far
//    longer than a prefetch's lead, `ahead_fmas`' worth of K steps ahead,
//    across entries, on B seen flat); where a loop over row bands
//    walks a batch chunk's entries again and again and the chunk stays in
//    cache, only its first band runs ahead, and later bands prefetch the line
//    they read;
//  - per K step, one prefetch of a line of that entry's A rows of the block,
//    which are contiguous: line number `step` of them. Over a batch entry's K
//    steps that touches every line where the block has at most a cache line
//    of rows (16 f32, 32 bf16 elements); past the last entry, where the block
//    has rows after it, those rows' first entries (what the next block reads).
// The entry ahead is clamped to the last: a prefetch never reaches past A or B.
#pragma once

#include <cstdint>

#include "mlir/IR/BuiltinOps.h"

namespace nkbench::mlir_backend {

struct BatchPrefetch {
  std::int64_t distance = 0;  // batch entries ahead; 0: no prefetch
  // Whether a row band's pass over a batch chunk (the whole batch where not
  // chunked) finds B in cache after the first band's.
  bool later_passes_hit_cache = false;
  // B's lines as many K steps ahead instead (across entries) as take a block
  // this many vector FMAs; 0: `distance` entries ahead.
  std::int64_t ahead_fmas = 0;
};

// Returns the number of prefetches inserted.
std::int64_t insertBatchPrefetches(mlir::ModuleOp module, const BatchPrefetch& settings);

}  // namespace nkbench::mlir_backend
