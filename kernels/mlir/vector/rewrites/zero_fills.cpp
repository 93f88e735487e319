#include "kernels/mlir/vector/rewrites/zero_fills.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

using mlir::LogicalResult;
using mlir::PatternRewriter;

// Half-open boxes, one interval per dimension of a tensor.
struct Box {
  llvm::SmallVector<std::int64_t> begin, end;
};

bool disjoint(const Box& a, const Box& b) {
  for (std::size_t d = 0; d < a.begin.size(); ++d)
    if (a.end[d] <= b.begin[d] || b.end[d] <= a.begin[d]) return true;
  return false;
}

// The box of a slice with static offsets and sizes and unit strides, in its
// source's (or destination's) dimensions.
std::optional<Box> sliceBox(mlir::OffsetSizeAndStrideOpInterface slice) {
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
std::optional<Box> writeBox(mlir::vector::TransferWriteOp write, mlir::RankedTensorType tensor) {
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

// Which elements of a statically shaped tensor some writes have covered, as a
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

// The value a linalg.fill put into every element of `box` of `tensor`, past
// the inserts that miss the box; or null.
mlir::Value filledWith(mlir::Value tensor, const Box& box) {
  while (true) {
    if (auto fill = tensor.getDefiningOp<mlir::linalg::FillOp>()) return fill.getInputs()[0];
    auto insert = tensor.getDefiningOp<mlir::tensor::InsertSliceOp>();
    if (!insert) return {};
    const std::optional<Box> written = sliceBox(insert);
    if (!written || !disjoint(box, *written)) return {};
    tensor = insert.getDest();
  }
}

// Below: whether no op reads the elements of `tensor` that `covered` leaves out.
bool unobserved(mlir::Value tensor, CoverageGrid covered, int depth = 0);

// A slice that only filled elements: fill(v, slice), so that a piece whose
// destination it is finds a fill to fuse. The slice stays the fill's
// destination: the pieces still write into one another's results in turn, as
// bufferization needs to keep them in place in C.
struct RefillSliceOfFill final : mlir::OpRewritePattern<mlir::tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::tensor::ExtractSliceOp slice, PatternRewriter& rewriter) const override {
    if (llvm::all_of(slice->getUsers(), [](mlir::Operation* user) { return llvm::isa<mlir::linalg::FillOp>(user); }))
      return mlir::failure();
    // A slice no op reads needs no fill (FillNoOpReads would take it away again).
    if (const CoverageGrid none(slice.getResultType().getShape()); !none.usable() || unobserved(slice.getResult(), none))
      return mlir::failure();
    const std::optional<Box> box = sliceBox(slice);
    const mlir::Value value = box ? filledWith(slice.getSource(), *box) : mlir::Value();
    if (!value) return mlir::failure();
    rewriter.setInsertionPointAfter(slice);
    auto fill = mlir::linalg::FillOp::create(rewriter, slice.getLoc(), mlir::ValueRange{value},
                                             mlir::ValueRange{slice.getResult()});
    rewriter.replaceAllUsesExcept(slice.getResult(), fill.getResult(0), fill);
    return mlir::success();
  }
};

// Whether no op reads the elements of `tensor` that `covered` leaves out:
// they reach only fills' destinations (which a fill does not read), slices no
// op reads in turn, and one chain of insert destinations, whose inserts cover
// elements as they go.
bool unobserved(mlir::Value tensor, CoverageGrid covered, int depth) {
  constexpr int kMaxDepth = 8;
  if (depth > kMaxDepth) return false;
  while (!covered.full()) {
    mlir::Value next;
    for (mlir::OpOperand& use : tensor.getUses()) {
      mlir::Operation* user = use.getOwner();
      if (auto fill = llvm::dyn_cast<mlir::linalg::FillOp>(user); fill && &use == fill.getDpsInitOperand(0)) continue;
      if (auto slice = llvm::dyn_cast<mlir::tensor::ExtractSliceOp>(user)) {
        const CoverageGrid none(slice.getResultType().getShape());
        if (none.usable() && unobserved(slice.getResult(), none, depth + 1)) continue;
        return false;
      }
      auto insert = llvm::dyn_cast<mlir::tensor::InsertSliceOp>(user);
      const std::optional<Box> box = insert && !next && &use == &insert.getDestMutable() ? sliceBox(insert) : std::nullopt;
      if (!box) return false;
      covered.mark(*box);
      next = insert.getResult();
    }
    if (!next) return true;
    tensor = next;
  }
  return true;
}

// A fill of C whose every element the split pieces overwrite, each piece
// having a fill of its own: C itself (no memset of C before the pieces).
struct FillNoOpReads final : mlir::OpRewritePattern<mlir::linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::linalg::FillOp fill, PatternRewriter& rewriter) const override {
    if (fill->getNumResults() != 1) return mlir::failure();  // a fill of a buffer
    const auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(fill.getResult(0).getType());
    if (!tensor || fill.getResult(0).use_empty()) return mlir::failure();
    const CoverageGrid none(tensor.getShape());
    if (!none.usable() || !unobserved(fill.getResult(0), none)) return mlir::failure();
    rewriter.replaceOp(fill, fill.getOutputs()[0]);
    return mlir::success();
  }
};

// The value of a transfer_write of a splat constant over the whole of a
// statically shaped tensor (a vectorized fill), or null.
mlir::Attribute splatOverWholeTensor(mlir::vector::TransferWriteOp write) {
  const auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(write.getBase().getType());
  mlir::DenseElementsAttr splat;
  if (!tensor || !tensor.hasStaticShape() || write.getMask() || !write.getPermutationMap().isMinorIdentity() ||
      write.getVectorType().getShape() != tensor.getShape() ||
      !llvm::all_of(write.getIndices(), [](mlir::Value index) { return mlir::isConstantIntValue(index, 0); }) ||
      !mlir::matchPattern(write.getVector(), mlir::m_Constant(&splat)) || !splat.isSplat())
    return {};
  return splat.getSplatValue<mlir::Attribute>();
}

// A read of a tensor that a splat write covers whole, where the read's padding
// is the splat's value (the zero fill of C under beta 0): the splat itself, so
// that masked accumulators start in registers as the whole vectors' do, not by
// masked loads that wait for the fill's stores to reach the cache.
struct ReadOfSplatFill final : mlir::OpRewritePattern<mlir::vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::vector::TransferReadOp read, PatternRewriter& rewriter) const override {
    auto fill = read.getBase().getDefiningOp<mlir::vector::TransferWriteOp>();
    const mlir::Attribute value = fill ? splatOverWholeTensor(fill) : mlir::Attribute();
    mlir::Attribute padding;
    if (!value || read.getMask() || !mlir::matchPattern(read.getPadding(), mlir::m_Constant(&padding)) ||
        value != padding)
      return mlir::failure();
    rewriter.replaceOpWithNewOp<mlir::arith::ConstantOp>(read, mlir::DenseElementsAttr::get(read.getVectorType(), value));
    return mlir::success();
  }
};

// The result of a loop that carries `use`'s tensor through its iterations
// untouched, through loops nested in it too (hoisting leaves C's tile so), or null.
mlir::Value carriedUnchanged(mlir::OpOperand& use) {
  auto loop = llvm::dyn_cast<mlir::LoopLikeOpInterface>(use.getOwner());
  if (!loop) return {};
  const mlir::BlockArgument carried = loop.getTiedLoopRegionIterArg(&use);
  if (!carried) return {};
  const mlir::OpOperand* yielded = loop.getTiedLoopYieldedValue(carried);
  mlir::Value inside = carried;
  while (inside.hasOneUse()) {
    mlir::OpOperand& next = *inside.getUses().begin();
    if (&next == yielded) return loop.getTiedLoopResult(&use);
    inside = carriedUnchanged(next);
    if (!inside) return {};
  }
  return {};
}

// A transfer_write of a splat over a whole tensor, whose result then only
// passes through writes and inserts at constant places that cover the tensor,
// and through loops that leave it untouched (no read sees it): the tensor under it.
struct CoveredSplatWrite final : mlir::OpRewritePattern<mlir::vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(mlir::vector::TransferWriteOp fill, PatternRewriter& rewriter) const override {
    if (!splatOverWholeTensor(fill)) return mlir::failure();
    const auto tensor = llvm::cast<mlir::RankedTensorType>(fill.getBase().getType());
    CoverageGrid grid(tensor.getShape());
    if (!grid.usable()) return mlir::failure();
    mlir::Value current = fill.getResult();
    while (current.hasOneUse() && !grid.full()) {
      mlir::Operation* user = *current.getUsers().begin();
      std::optional<Box> box;
      if (auto write = llvm::dyn_cast<mlir::vector::TransferWriteOp>(user); write && write.getBase() == current)
        box = writeBox(write, tensor);
      else if (auto insert = llvm::dyn_cast<mlir::tensor::InsertSliceOp>(user); insert && insert.getDest() == current)
        box = sliceBox(insert);
      if (mlir::Value through = carriedUnchanged(*current.getUses().begin()); !box && through) {
        current = through;
        continue;
      }
      if (!box) break;
      grid.mark(*box);
      current = user->getResult(0);
    }
    if (!grid.full()) return mlir::failure();
    rewriter.replaceOp(fill, fill.getBase());
    return mlir::success();
  }
};

class ZeroFillsPass final : public mlir::PassWrapper<ZeroFillsPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ZeroFillsPass)
  llvm::StringRef getArgument() const override { return kZeroFillsPass; }
  llvm::StringRef getDescription() const override {
    return "Zero fills of C as fills of each piece of a split C, and covered splat writes removed";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect>();
  }
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<RefillSliceOfFill, FillNoOpReads, ReadOfSplatFill, CoveredSplatWrite>(&getContext());
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

}  // namespace

void registerZeroFillsPass() {
  static const bool registered = [] {
    mlir::PassRegistration<ZeroFillsPass>();
    return true;
  }();
  (void)registered;
}

}  // namespace nkbench::mlir_backend
