// Structural proof that a compiled kernel is made of nanokernels: the op counts
// of the scheduled and lowered IR must match what the register-block plan implies,
// so a silent fallback to a generic lowering cannot pass as a nanokernel result.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "harness/core/problem.h"
#include "kernels/mlir/vector/register_block_plan.h"
#include "kernels/mlir/vector/transform_script.h"

namespace nkbench::mlir_backend {

using OpCounts = std::map<std::string, std::int64_t>;  // op name -> occurrences

struct NanokernelExpectation {
  std::int64_t fma = 0;         // nanokernels per K step (one per accumulator vector)
  std::int64_t masked = 0;      // of those, full-width ones on a masked N edge
  std::int64_t scalar_tail = 0; // 1-wide tail contractions (no vector to broadcast into)
};

NanokernelExpectation expectedNanokernels(const RegisterBlockPlan& plan);

struct NanokernelEvidence {
  bool composed = false;  // the rewrite produced exactly the expected nanokernels
  std::string summary;    // one line for the report
};

// `scheduled`: op counts after the transform schedule; `lowered`: after lowering to
// LLVM, where `llvm.call_intrinsic` ops are counted as "llvm.call_intrinsic:NAME".
// FMA nanokernels (f32, widened bf16) are vector.fma; bf16 dot-product ones
// x86vector.avx512.dot (vdpbf16ps). A masked edge must lower to one masked
// store per masked accumulator.
NanokernelEvidence checkNanokernels(Lowering lowering, const RegisterBlockPlan& plan, const OpCounts& scheduled,
                                    const OpCounts& lowered);

// AMX: `expected_tile_products` tdpbf16ps in the payload, each lowered, all on
// tile registers the kernel names (none that LLVM would allocate, configure and
// release at every call).
NanokernelEvidence checkAmxTiles(std::int64_t expected_tile_products, const OpCounts& payload,
                                 const OpCounts& lowered);

// Emulated AMX: `expected_tile_products` calls of the emulated tdpbf16ps in the
// payload, each lowered, and no AMX intrinsic left (the host could not run one).
NanokernelEvidence checkEmulatedAmxTiles(std::int64_t expected_tile_products, const OpCounts& payload,
                                         const OpCounts& lowered);

// An mlp's epilogue on the tile route: each region's blocks take it on their
// f32 rows right after their tile stores (one bias add and one maximum per
// region's row loop, as `epilogue` asks), before the next block.
NanokernelEvidence checkAmxEpilogue(const MlpLayers& epilogue, std::int64_t regions, const OpCounts& payload);

// "8x32" or, with edge blocks, "8x32+7x32+7x1"; an edge block's columns are
// those of C ("13x18": a 16-lane vector and one masked to 2 lanes).
std::string describeRegisterBlocks(const RegisterBlockPlan& plan);

}  // namespace nkbench::mlir_backend
