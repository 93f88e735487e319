// Static boxes of statically shaped tensors: what a slice or a vector write
// covers, and which elements a set of them has covered. Shared by the rewrites
// that reason about C's pieces (zero_fills.h, merged_writes.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace nkbench::mlir_backend {

// Half-open boxes, one interval per dimension of a tensor.
struct Box {
  llvm::SmallVector<std::int64_t> begin, end;

  std::int64_t elements() const {
    std::int64_t count = 1;
    for (std::size_t d = 0; d < begin.size(); ++d) count *= std::max<std::int64_t>(end[d] - begin[d], 0);
    return count;
  }
};

inline bool disjoint(const Box& a, const Box& b) {
  for (std::size_t d = 0; d < a.begin.size(); ++d)
    if (a.end[d] <= b.begin[d] || b.end[d] <= a.begin[d]) return true;
  return false;
}

// The box of a slice with static offsets and sizes and unit strides, in its
// source's (or destination's) dimensions.
inline std::optional<Box> sliceBox(mlir::OffsetSizeAndStrideOpInterface slice) {
  if (!slice.hasUnitStride()) return std::nullopt;
  Box box;
  for (auto [offset, size] : llvm::zip(slice.getStaticOffsets(), slice.getStaticSizes())) {
    if (mlir::ShapedType::isDynamic(offset) || mlir::ShapedType::isDynamic(size)) return std::nullopt;
    box.begin.push_back(offset);
    box.end.push_back(offset + size);
  }
  return box;
}

// The box a transfer_write stores into, clipped to its tensor (out-of-bounds
// lanes store nothing): constant indices, a minor identity map, no mask.
inline std::optional<Box> writeBox(mlir::vector::TransferWriteOp write, mlir::RankedTensorType tensor) {
  if (write.getMask() || !write.getPermutationMap().isMinorIdentity()) return std::nullopt;
  const std::int64_t leading = tensor.getRank() - write.getVectorType().getRank();
  Box box;
  for (std::int64_t d = 0; d < tensor.getRank(); ++d) {
    const std::optional<std::int64_t> index = mlir::getConstantIntValue(write.getIndices()[d]);
    if (!index) return std::nullopt;
    const std::int64_t extent = d < leading ? 1 : write.getVectorType().getDimSize(d - leading);
    box.begin.push_back(*index);
    box.end.push_back(std::min(*index + extent, tensor.getDimSize(d)));
  }
  return box;
}

// Which elements of a statically shaped tensor some boxes have covered, as a
// row-major grid; unusable for dynamic shapes or more than kLimit elements.
class CoverageGrid {
 public:
  static constexpr std::int64_t kLimit = 1 << 20;
  explicit CoverageGrid(llvm::ArrayRef<std::int64_t> shape) : shape_(shape) {
    std::int64_t elements = 1;
    if (shape.empty()) return;  // rank 0: nothing to split, unusable
    for (std::int64_t extent : shape) {
      if (extent <= 0 || elements > kLimit / extent) return;  // dynamic, empty or too large: unusable
      elements *= extent;
    }
    covered_.assign(std::size_t(elements), false);
    uncovered_ = elements;
  }
  bool usable() const { return !covered_.empty(); }
  void mark(const Box& box) { markFrom(box, 0, 0); }
  bool full() const { return uncovered_ == 0; }

 private:
  void markFrom(const Box& box, std::size_t dim, std::int64_t base) {
    for (std::int64_t i = std::max<std::int64_t>(box.begin[dim], 0); i < std::min(box.end[dim], shape_[dim]); ++i) {
      const std::int64_t at = base * shape_[dim] + i;
      if (dim + 1 == shape_.size()) {
        if (!covered_[std::size_t(at)]) --uncovered_;
        covered_[std::size_t(at)] = true;
      } else {
        markFrom(box, dim + 1, at);
      }
    }
  }
  llvm::SmallVector<std::int64_t> shape_;
  std::vector<bool> covered_;
  std::int64_t uncovered_ = -1;  // -1: unusable, never full
};

// Whether `boxes` cover every element of `shape` and none twice (a later
// write over an earlier one would make their order matter).
inline bool coversExactlyOnce(llvm::ArrayRef<std::int64_t> shape, llvm::ArrayRef<Box> boxes) {
  CoverageGrid grid(shape);
  if (!grid.usable()) return false;
  std::int64_t written = 0, elements = 1;
  for (std::int64_t extent : shape) elements *= extent;
  for (const Box& box : boxes) {
    grid.mark(box);
    written += box.elements();
  }
  return grid.full() && written == elements;
}

}  // namespace nkbench::mlir_backend
