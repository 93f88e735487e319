// The shape classes tuning works on: cases of one class are expected to want
// the same schedule, so that a tuning file measured on some shapes serves the
// user's other shapes of the same class.
#pragma once

#include <optional>
#include <string>

#include "harness/core/problem.h"
#include "harness/host/cache_info.h"

namespace nkbench::mlir_backend {

// "KIND DTYPE mROWS nCOLS FOOTPRINT", e.g. "brgemm f32 m8-31 n16-63 l1":
//  - M in 1-7 (under one register block of rows), 8-31, 32+;
//  - N in 1-15 (under one zmm of f32), 16-63, 64+;
//  - where one call's A and B (the whole batch; for a GEMM also C) live:
//    l1, l2, or mem (past L2), on this host's caches.
// The edges (M and N modulo the blocks) decide much of a register block's
// speed, the footprint the batch chunks, prefetch and GEMM blocks.
std::string shapeClassOf(const Problem& problem, const CacheSizes& caches);

// The element type a shape class names (its second word), or nullopt where the
// text is not a class shapeClassOf writes (a kind, a type and the three bins
// above, in that order), such as a hand-edited class no case can fall in.
std::optional<DType> shapeClassDType(const std::string& shape_class);

}  // namespace nkbench::mlir_backend
