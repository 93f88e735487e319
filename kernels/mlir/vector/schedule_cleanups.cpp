#include "kernels/mlir/vector/schedule_cleanups.h"

#include "kernels/mlir/vector/rewrites/read_sinking.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

// The pattern groups of a cleanup; the reads' sinking is a walk of its own.
unsigned bitsOf(const ScheduleCleanup& cleanup) {
  return (cleanup.fold_tensor_subsets ? 1u : 0u) | (cleanup.fold_arith_extension ? 2u : 0u) |
         (cleanup.lower_multi_reduction ? 4u : 0u);
}

// What transform.apply_patterns.canonicalization gathers: every loaded dialect's
// patterns and every registered op's.
void addCanonicalization(mlir::MLIRContext& context, mlir::RewritePatternSet& patterns) {
  for (mlir::Dialect* dialect : context.getLoadedDialects()) dialect->getCanonicalizationPatterns(patterns);
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, &context);
}

}  // namespace

ScheduleCleanupRunner::ScheduleCleanupRunner(mlir::MLIRContext& context) : context_(context) {
  context_.loadDialect<mlir::affine::AffineDialect, mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                       mlir::vector::VectorDialect>();
}

ScheduleCleanupRunner::ContextShape ScheduleCleanupRunner::shapeNow() {
  return {context_.getLoadedDialects().size(), context_.getRegisteredOperations().size()};
}

const mlir::FrozenRewritePatternSet& ScheduleCleanupRunner::patternsFor(const ScheduleCleanup& cleanup) {
  const ContextShape shape = shapeNow();
  const auto found = sets_.find(bitsOf(cleanup));
  if (found != sets_.end() && found->second.shape == shape) return found->second.patterns;
  // In the order transform.apply_patterns listed them, canonicalization last:
  // equal benefits are tried in that order.
  mlir::RewritePatternSet patterns(&context_);
  if (cleanup.fold_tensor_subsets) mlir::tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
  if (cleanup.fold_arith_extension) mlir::vector::populateFoldArithExtensionPatterns(patterns);
  if (cleanup.lower_multi_reduction)
    mlir::vector::populateVectorMultiReductionLoweringPatterns(patterns,
                                                               mlir::vector::VectorMultiReductionLowering::InnerParallel);
  addCanonicalization(context_, patterns);
  PatternSet& set = sets_.insert_or_assign(bitsOf(cleanup), PatternSet{shape, std::move(patterns)}).first->second;
  return set.patterns;
}

mlir::LogicalResult ScheduleCleanupRunner::apply(mlir::ModuleOp module, const ScheduleCleanup& cleanup) {
  const mlir::FrozenRewritePatternSet& patterns = patternsFor(cleanup);
  mlir::GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(mlir::GreedySimplifyRegionLevel::Disabled);
  mlir::IRRewriter rewriter(&context_);
  for (mlir::func::FuncOp function : module.getOps<mlir::func::FuncOp>()) {
    if (mlir::failed(mlir::applyPatternsGreedily(function, patterns, config))) return mlir::failure();
    if (cleanup.sink_vector_producers) sinkTensorReadsToFirstUse(function);
    mlir::DominanceInfo dominance;
    mlir::eliminateCommonSubExpressions(rewriter, dominance, function);
  }
  return mlir::success();
}

}  // namespace nkbench::mlir_backend
