// The cache block a GEMM's vector-route block calls take, before it is balanced
// over the GEMM (chooseGemmBlocking) and shared among threads, and the column
// width it widens to: shared by the backend (kernel_problem.h) and tuning's
// candidates and estimates, so that what is measured and estimated is what runs.
#pragma once

#include "harness/core/problem.h"
#include "harness/host/cache_info.h"
#include "kernels/mlir/schedule/schedule.h"

namespace nkbench::mlir_backend {

// The schedule's preferred block with its rows cut, to whole register blocks
// and down to two of them, until the A and B panels one block call reads over
// all of K (at most M rows and N columns, in the packed elements' bytes) fit
// three quarters of L2 together. Each register band of the call reads the whole
// B panel again, and the M blocks outer order reads the A panel again for every
// N block: where both stay in L2, neither is read from L3 more than once. A
// block the schedule names (`:gemm=`) and the tile route's are as they are.
GemmBlocking fittedGemmBlock(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches);

// An N that leaves a narrow last block pads it: its kernel computes, or on the
// tile route the padded block does, the rest of its vectors on zeros, and it
// reads its A panel again for few columns (N = 100 in blocks of 32: 128
// columns, the last block 4 of them). The column block, from `width` up to four times
// it, that pads N least while the panels of `rows` rows still fit as above:
// whole register blocks wide (other widths add a narrow register panel to
// every block: AVX2 f32 256x520x256 in blocks of 40, 0.95 -> 0.89x
// onednn-packed), or all of N in one block of whole vectors, whose edge is N's
// own (f32 121x75x66 in one block of 80: 0.85 -> 1.0x, bf16 0.92 -> 1.1x;
// f32 512x100x512 in blocks of 112: 0.88 -> 1.02x on the Zen 5 VM); `width`
// where none pads less.
std::int64_t leastPaddedWidth(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches,
                              std::int64_t rows, std::int64_t width);

}  // namespace nkbench::mlir_backend
