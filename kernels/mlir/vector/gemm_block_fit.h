// The cache block a GEMM's vector-route block calls take, before it is balanced
// over the GEMM (chooseGemmBlocking) and shared among threads: shared by the
// backend (kernel_problem.h) and tuning's candidates and estimates, so that
// what is measured and estimated is what runs.
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

}  // namespace nkbench::mlir_backend
