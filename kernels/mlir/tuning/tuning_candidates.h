// The schedules `nkbench tune` measures for one shape class, ranked by a cost
// model so that a bounded number of measurements covers the likely winners.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/core/isa.h"
#include "harness/core/problem.h"
#include "harness/host/cache_info.h"
#include "kernels/mlir/schedule/schedule.h"

namespace nkbench::mlir_backend {

// Cycles one call of `schedule` would take on `problem` (a BRGEMM; a GEMM as its
// blocks), counting per register block and reduction step its vector FMAs or dot
// products and loads on two FMA and two load ports, and FMA latency (4 cycles)
// where the block has too few accumulator chains. It ranks candidates and
// predicts nothing absolute: the tuner measures them.
double estimatedCycles(const Problem& problem, const Schedule& schedule, const CacheSizes& caches);

// Register blocks worth measuring for `problems` (one shape class, one type) under
// cap `isa`, as schedule names: the analytic default first, then up to `count`
// others of every nanokernel family the cap allows (the bf16 dot product and the
// widening FMA route are both candidates), best estimate first. Under
// amx-emulated no tile schedule is a candidate: the emulation's speed says
// nothing of the tiles'.
std::vector<std::string> registerBlockCandidates(Isa isa, const std::vector<Problem>& problems,
                                                 const CacheSizes& caches, std::size_t count);

// Settings worth measuring on `schedule` (a name) for `problems`: the other
// forms of the rows register blocks leave over (EdgeRows), where one of the
// problems has such rows, and batch prefetch distances (none, 1, 2, 4 entries
// ahead), where one call's operands of a problem spill out of L2 (in cache,
// prefetches change little; cold operands are what they are for). Only
// settings that change the kernel of some problem; tile schedules get none.
std::vector<std::string> settingCandidates(const std::string& schedule, const std::vector<Problem>& problems,
                                           const CacheSizes& caches);

// GEMM cache blocks worth measuring around the block `schedule` (a name) runs
// on `largest` (fittedGemmBlock): the name first, then that block's rows,
// columns and depth halved and doubled one at a time, in whole register blocks,
// each named (`:gemm=`). Tile schedules keep their blocking rule: none besides.
std::vector<std::string> gemmBlockCandidates(const std::string& schedule, const Problem& largest,
                                             const CacheSizes& caches);

}  // namespace nkbench::mlir_backend
