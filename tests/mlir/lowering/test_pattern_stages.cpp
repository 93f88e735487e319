// Pattern-stage passes (pattern_stages.h): each set in turn, to a fixed point,
// and the blocks left as they are (no region simplification).

#include <gtest/gtest.h>

#include <string>

#include "kernels/mlir/lowering/pattern_stages.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/RegionUtils.h"
#include "tests/support/kernel_ir.h"

namespace nkbench::mlir_backend {
namespace {

// x * 2 -> x + x
struct MulByTwoAsAdd : mlir::OpRewritePattern<mlir::arith::MulIOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::arith::MulIOp op, mlir::PatternRewriter& rewriter) const override {
    llvm::APInt factor;
    if (!mlir::matchPattern(op.getRhs(), mlir::m_ConstantInt(&factor)) || factor != 2) return mlir::failure();
    rewriter.replaceOpWithNewOp<mlir::arith::AddIOp>(op, op.getLhs(), op.getLhs());
    return mlir::success();
  }
};

// x + x -> x << 1
struct SelfAddAsShift : mlir::OpRewritePattern<mlir::arith::AddIOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::arith::AddIOp op, mlir::PatternRewriter& rewriter) const override {
    if (op.getLhs() != op.getRhs()) return mlir::failure();
    auto one = mlir::arith::ConstantOp::create(rewriter, op.getLoc(), rewriter.getIntegerAttr(op.getType(), 1));
    rewriter.replaceOpWithNewOp<mlir::arith::ShLIOp>(op, op.getLhs(), one);
    return mlir::success();
  }
};

constexpr const char* kStagesInOrder = "test-pattern-stages-in-order";
constexpr const char* kStagesReversed = "test-pattern-stages-reversed";

void noDialects(mlir::DialectRegistry&) {}
void mulByTwoAsAdd(mlir::RewritePatternSet& patterns) { patterns.add<MulByTwoAsAdd>(patterns.getContext()); }
void selfAddAsShift(mlir::RewritePatternSet& patterns) { patterns.add<SelfAddAsShift>(patterns.getContext()); }

void registerTestStages() {
  registerPatternStagesPass({kStagesInOrder, "test", noDialects, {mulByTwoAsAdd, selfAddAsShift}});
  registerPatternStagesPass({kStagesReversed, "test", noDialects, {selfAddAsShift, mulByTwoAsAdd}});
}

// A chain of two doublings, in a function whose two exits are the same block
// twice, which region simplification merges, one of them with an argument
// nothing uses, which it drops.
constexpr const char* kKernel = R"mlir(
func.func @doubled(%x: i32, %which: i1) -> i32 {
  %c2 = arith.constant 2 : i32
  %y = arith.muli %x, %c2 : i32
  %z = arith.muli %y, %c2 : i32
  cf.cond_br %which, ^left(%x : i32), ^right
^left(%unused: i32):
  return %z : i32
^right:
  return %z : i32
}
)mlir";

struct Result {
  std::string text;
  std::size_t blocks = 0;
};

Result run(const char* pass) {
  registerTestStages();
  mlir::MLIRContext context;
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(pass, pm))) return {"(pipeline does not parse)"};
  // Two kernels, one after the other: the second uses the sets frozen for the first.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  for (int i = 0; i < 2; ++i) {
    module = test::parseKernelIr(context, kKernel);
    if (!module) return {"(does not parse)"};
    if (mlir::failed(pm.run(*module))) return {"(pass failed)"};
  }
  Result result;
  llvm::raw_string_ostream os(result.text);
  module->print(os);
  module->walk([&](mlir::func::FuncOp f) { result.blocks = f.getBlocks().size(); });
  return result;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PatternStages, ApplyEachSetInTurnToAFixedPoint) {
  const Result in_order = run(kStagesInOrder);
  EXPECT_EQ(count(in_order.text, "arith.shli"), 2u) << in_order.text;
  EXPECT_EQ(count(in_order.text, "arith.muli") + count(in_order.text, "arith.addi"), 0u) << in_order.text;
  // The shifts' set ran first, before there was an x + x to rewrite.
  const Result reversed = run(kStagesReversed);
  EXPECT_EQ(count(reversed.text, "arith.addi"), 2u) << reversed.text;
  EXPECT_EQ(count(reversed.text, "arith.shli"), 0u) << reversed.text;
}

TEST(PatternStages, LeaveTheBlocksAsTheyAre) {
  const Result result = run(kStagesInOrder);
  EXPECT_EQ(result.blocks, 3u);
  EXPECT_NE(result.text.find("^bb1(%"), std::string::npos) << result.text;
  // Region simplification would have merged the two exits.
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = test::parseKernelIr(context, kKernel);
  ASSERT_TRUE(module);
  mlir::IRRewriter rewriter(&context);
  std::size_t blocks = 0;
  module->walk([&](mlir::func::FuncOp f) {
    (void)mlir::simplifyRegions(rewriter, f->getRegions(), /*mergeBlocks=*/true);
    blocks = f.getBlocks().size();
  });
  EXPECT_LT(blocks, 3u);
  // Even at its normal level, which merges no blocks, it drops the unused argument.
  module = test::parseKernelIr(context, kKernel);
  ASSERT_TRUE(module);
  module->walk([&](mlir::func::FuncOp f) {
    (void)mlir::simplifyRegions(rewriter, f->getRegions(), /*mergeBlocks=*/false);
    EXPECT_EQ(f.getBlocks().size(), 3u);
    EXPECT_EQ(std::next(f.getBlocks().begin())->getNumArguments(), 0u);
  });
}

}  // namespace
}  // namespace nkbench::mlir_backend
