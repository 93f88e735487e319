// The clean-ups the compiler applies between and after the schedule's
// sequences (schedule_cleanups.h): canonicalization with the pattern groups a
// schedule asks for, then CSE; frozen once, and again after a dialect loads.

#include <gtest/gtest.h>

#include "kernels/mlir/dialect_registry.h"
#include "kernels/mlir/vector/schedule_cleanups.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace nkbench::mlir_backend {
namespace {

// A register block's row read through a slice of C, and one sum computed twice.
constexpr const char* kSliceRead = R"mlir(
func.func @row(%c: tensor<64x64xf32>, %i: index, %j: index, %v: vector<1x16xf32>) -> (vector<1x16xf32>, vector<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %block = tensor.extract_slice %c[%i, %j] [8, 32] [1, 1] : tensor<64x64xf32> to tensor<8x32xf32>
  %row = vector.transfer_read %block[%c1, %c0], %pad {in_bounds = [true, true]} : tensor<8x32xf32>, vector<1x16xf32>
  %a = arith.addf %row, %v : vector<1x16xf32>
  %b = arith.addf %row, %v : vector<1x16xf32>
  return %a, %b : vector<1x16xf32>, vector<1x16xf32>
}
)mlir";

constexpr const char* kIdentity = R"mlir(
func.func @identity(%x: f32) -> f32 {
  return %x : f32
}
)mlir";

// Only the cf dialect's canonicalization turns a branch on a constant into a jump.
constexpr const char* kConstantBranch = R"mlir(
func.func @branch(%x: f32) -> f32 {
  %true = arith.constant true
  cf.cond_br %true, ^yes, ^no
^yes:
  return %x : f32
^no:
  %y = arith.addf %x, %x : f32
  return %y : f32
}
)mlir";

std::size_t count(mlir::ModuleOp module, llvm::StringRef name) {
  std::size_t n = 0;
  module.walk([&](mlir::Operation* op) { n += op->getName().getStringRef() == name; });
  return n;
}

class ScheduleCleanupsTest : public ::testing::Test {
 protected:
  ScheduleCleanupsTest() {
    mlir::DialectRegistry registry;
    registerKernelDialects(registry);
    context_.appendDialectRegistry(registry);
  }
  mlir::OwningOpRef<mlir::ModuleOp> parse(const char* source) {
    return mlir::parseSourceString<mlir::ModuleOp>(source, &context_);
  }

  mlir::MLIRContext context_;
  ScheduleCleanupRunner cleanups_{context_};
};

TEST_F(ScheduleCleanupsTest, FoldsSlicesIntoTransfersOnlyWhereAskedAndRemovesCommonSubexpressions) {
  auto kept = parse(kSliceRead);
  ASSERT_TRUE(kept);
  ASSERT_TRUE(mlir::succeeded(cleanups_.apply(*kept, ScheduleCleanup{})));
  EXPECT_EQ(count(*kept, "tensor.extract_slice"), 1u);
  EXPECT_EQ(count(*kept, "arith.addf"), 1u) << "CSE after canonicalization";

  auto folded = parse(kSliceRead);
  ASSERT_TRUE(folded);
  ASSERT_TRUE(mlir::succeeded(cleanups_.apply(*folded, ScheduleCleanup{.fold_tensor_subsets = true})));
  EXPECT_EQ(count(*folded, "tensor.extract_slice"), 0u);
  mlir::vector::TransferReadOp read;
  folded->walk([&](mlir::vector::TransferReadOp op) { read = op; });
  ASSERT_TRUE(read);
  EXPECT_TRUE(llvm::isa<mlir::BlockArgument>(read.getBase())) << "reads C itself";
  EXPECT_EQ(count(*folded, "affine.apply"), 1u) << "row i + 1; the column is j itself";
}

TEST_F(ScheduleCleanupsTest, ADialectLoadedAfterTheFirstCleanupBringsItsCanonicalization) {
  auto first = parse(kIdentity);
  ASSERT_TRUE(first);
  ASSERT_FALSE(context_.getLoadedDialect("cf"));
  ASSERT_TRUE(mlir::succeeded(cleanups_.apply(*first, ScheduleCleanup{})));

  auto later = parse(kConstantBranch);  // loads cf
  ASSERT_TRUE(later);
  ASSERT_TRUE(mlir::succeeded(cleanups_.apply(*later, ScheduleCleanup{})));
  EXPECT_EQ(count(*later, "cf.cond_br"), 0u);
}

}  // namespace
}  // namespace nkbench::mlir_backend
