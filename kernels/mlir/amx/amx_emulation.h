// Emulated AMX: rewrites the amx ops of the tile payload (amx_payload_ir.h) into
// vector ops with the same semantics, so the AMX kernel's own data movement and
// indexing run (and are verified) on hosts without AMX. Not AMX performance.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace nkbench::mlir_backend {

// !amx.tile<16x16xf32> / <16x32xbf16> become vector<16x16xf32> / <16x32xbf16>;
// tile_load/tile_store become transfers of 16 rows at the memref's row stride;
// tile_mulf computes as the Intel SDM defines tdpbf16ps: per C element, even and
// odd products summed into two f32 partials by FMAs, then C += even + odd, with
// denormal inputs read as zero and denormal results flushed to zero.
mlir::LogicalResult emulateAmxTiles(mlir::ModuleOp module);

}  // namespace nkbench::mlir_backend
