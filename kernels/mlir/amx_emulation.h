// Emulated AMX: rewrites the amx ops of the tile payload (amx_payload_ir.h) into
// vector ops with the same semantics, so the AMX kernel's own data movement and
// indexing run (and are verified) on hosts without AMX. Not AMX performance.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace nkbench::mlir_backend {

// !amx.tile<16x16xf32> / <16x32xbf16> become vector<16x16xf32> / <16x32xbf16>;
// tile_load/tile_store become transfers of 16 rows at the memref's row stride;
// tile_mulf accumulates as tdpbf16ps does: for each C element and pair p = 0..15,
// acc += a_odd * b_odd, then acc += a_even * b_even, each rounded to f32.
mlir::LogicalResult emulateAmxTiles(mlir::ModuleOp module);

}  // namespace nkbench::mlir_backend
