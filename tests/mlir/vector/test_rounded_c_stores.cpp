// A bf16 C rounded at its accumulators' stores (rounded_c_stores.h): the f32
// sum on the stack goes with the passes that widen C into it and round it out,
// unless a read of the sum may see one of its stores.

#include <gtest/gtest.h>

#include <string>

#include "kernels/mlir/vector/buffer_rewrites/rounded_c_stores.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Verifier.h"
#include "tests/support/kernel_ir.h"

namespace nkbench::mlir_backend {
namespace {

// A 4x20 bf16 C under beta 1, as bufferization leaves the payload: a prologue
// widens C into the sum, one 1x20 block per row (a loop) reads its accumulators
// through a subview (a whole vector and a 4-wide edge), adds, stores them, and
// an epilogue rounds the sum into C. `{after}` goes after the blocks.
constexpr const char* kKernel = R"mlir(
func.func @nk_brgemm(%A: memref<4xf32>, %B: memref<4xf32>, %C: memref<4x20xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %bf16_pad = ub.poison : bf16
  %sum_pad = ub.poison : f32
  %one = arith.constant dense<1.0> : vector<1x16xf32>
  %sum = memref.alloca() {alignment = 64 : i64, nkbench.c_sum} : memref<4x20xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %x = vector.transfer_read %C[%i, %c0], %bf16_pad {in_bounds = [true, true]} : memref<4x20xbf16>, vector<1x16xbf16>
    %wide = arith.extf %x : vector<1x16xbf16> to vector<1x16xf32>
    vector.transfer_write %wide, %sum[%i, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, memref<4x20xf32>
    %t = vector.transfer_read %C[%i, %c16], %bf16_pad {in_bounds = [true, true]} : memref<4x20xbf16>, vector<1x4xbf16>
    %wide_t = arith.extf %t : vector<1x4xbf16> to vector<1x4xf32>
    vector.transfer_write %wide_t, %sum[%i, %c16] {in_bounds = [true, true]} : vector<1x4xf32>, memref<4x20xf32>
  }
  scf.for %row = %c0 to %c4 step %c1 {
    %block = memref.subview %sum[%row, 0] [1, 20] [1, 1] : memref<4x20xf32> to memref<1x20xf32, strided<[20, 1], offset: ?>>
    %a0 = vector.transfer_read %block[%c0, %c0], %pad {in_bounds = [true, true]} : memref<1x20xf32, strided<[20, 1], offset: ?>>, vector<1x16xf32>
    %a1 = vector.transfer_read %block[%c0, %c16], %pad {in_bounds = [true, false]} : memref<1x20xf32, strided<[20, 1], offset: ?>>, vector<1x16xf32>
    %s0 = arith.addf %a0, %one : vector<1x16xf32>
    %s1 = arith.addf %a1, %one : vector<1x16xf32>
    vector.transfer_write %s0, %block[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, memref<1x20xf32, strided<[20, 1], offset: ?>>
    vector.transfer_write %s1, %block[%c0, %c16] {in_bounds = [true, false]} : vector<1x16xf32>, memref<1x20xf32, strided<[20, 1], offset: ?>>
  }
  {after}
  scf.for %i = %c0 to %c4 step %c1 {
    %s = vector.transfer_read %sum[%i, %c0], %sum_pad {in_bounds = [true, true]} : memref<4x20xf32>, vector<1x16xf32>
    %r = arith.truncf %s : vector<1x16xf32> to vector<1x16xbf16>
    vector.transfer_write %r, %C[%i, %c0] {in_bounds = [true, true]} : vector<1x16xbf16>, memref<4x20xbf16>
    %t = vector.transfer_read %sum[%i, %c16], %sum_pad {in_bounds = [true, true]} : memref<4x20xf32>, vector<1x4xf32>
    %rt = arith.truncf %t : vector<1x4xf32> to vector<1x4xbf16>
    vector.transfer_write %rt, %C[%i, %c16] {in_bounds = [true, true]} : vector<1x4xbf16>, memref<4x20xbf16>
  }
  return
}
)mlir";

constexpr RoundingRoute kNative{.one_pass = true, .native_rounding = true};

std::string kernel(const std::string& after) {
  std::string text = kKernel;
  text.replace(text.find("{after}"), 7, after);
  return text;
}

struct Counts {
  int allocas = 0, f32_transfers = 0, rounded_stores = 0, widened_reads = 0;
};

Counts count(mlir::ModuleOp module) {
  Counts counts;
  module.walk([&](mlir::Operation* op) {
    if (llvm::isa<mlir::memref::AllocaOp>(op)) ++counts.allocas;
    if (auto transfer = llvm::dyn_cast<mlir::VectorTransferOpInterface>(op))
      counts.f32_transfers += transfer.getVectorType().getElementType().isF32();
    if (auto store = llvm::dyn_cast<mlir::vector::TransferWriteOp>(op))
      counts.rounded_stores += store.getVector().getDefiningOp<mlir::arith::TruncFOp>() != nullptr;
    counts.widened_reads += llvm::isa<mlir::arith::ExtFOp>(op);
  });
  return counts;
}

TEST(RoundedCStores, OnePassRoundsAtTheStoresAndDropsTheSum) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kernel("").c_str());
  ASSERT_TRUE(module);
  const RoundedCStores rounded = roundCAtItsStores(*module, kNative);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module)));
  EXPECT_TRUE(rounded.applied);
  EXPECT_EQ(rounded.rounded_stores, 2);
  EXPECT_EQ(rounded.widened_reads, 2);
  EXPECT_EQ(rounded.summary(), "bf16 C rounded at 2 accumulator stores, widened at 2 accumulator reads");
  const Counts counts = count(*module);
  EXPECT_EQ(counts.allocas, 0);
  EXPECT_EQ(counts.f32_transfers, 0);  // no transfer of the sum is left: C's are bf16
  EXPECT_EQ(counts.rounded_stores, 2); // the blocks', not the epilogue's
  EXPECT_EQ(counts.widened_reads, 2);  // the blocks', not the prologue's
  // The edge keeps its bounds: a masked or out-of-bounds transfer of C's view.
  bool edge_out_of_bounds = false;
  module->walk([&](mlir::vector::TransferWriteOp store) {
    edge_out_of_bounds |= store.getBase().getDefiningOp<mlir::memref::SubViewOp>() && !store.getInBoundsValues().back();
  });
  EXPECT_TRUE(edge_out_of_bounds);
}

TEST(RoundedCStores, ChunkedBatchKeepsTheSum) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kernel("").c_str());
  ASSERT_TRUE(module);
  const RoundedCStores rounded = roundCAtItsStores(*module, {.one_pass = false, .native_rounding = true});
  EXPECT_FALSE(rounded.applied);
  EXPECT_EQ(rounded.summary(), "bf16 C rounded from its f32 sum on the stack (the batch runs in chunks)");
  EXPECT_EQ(count(*module).allocas, 1);
}

TEST(RoundedCStores, IntegerRoundingKeepsTheSum) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kernel("").c_str());
  ASSERT_TRUE(module);
  const RoundedCStores rounded = roundCAtItsStores(*module, {.one_pass = true, .native_rounding = false});
  EXPECT_FALSE(rounded.applied);
  EXPECT_EQ(rounded.kept_because, "the rounding is integer arithmetic here, kept in one loop");
  EXPECT_EQ(count(*module).allocas, 1);
}

// A read of row 2 after the blocks may see a block's store (the loop's rows
// 0-3): the rounded C would not give back the sum, so the kernel keeps it.
TEST(RoundedCStores, AReadThatMaySeeAStoreKeepsTheSum) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kernel(R"mlir(
  %c2 = arith.constant 2 : index
  %seen = vector.transfer_read %sum[%c2, %c0], %pad {in_bounds = [true, true]} : memref<4x20xf32>, vector<1x16xf32>
  vector.transfer_write %seen, %sum[%c2, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, memref<4x20xf32>
)mlir").c_str());
  ASSERT_TRUE(module);
  const RoundedCStores rounded = roundCAtItsStores(*module, kNative);
  EXPECT_FALSE(rounded.applied);
  EXPECT_EQ(rounded.kept_because, "a read of it may see one of its stores");
  EXPECT_EQ(count(*module).allocas, 1);
}

// Accumulators not hoisted out of a reduction loop: each iteration reads what
// the one before stored, at the same place (and reads nothing after a store in
// its own iteration). Rounded at every step, C would lose the sum's bits, so
// the kernel keeps it.
TEST(RoundedCStores, AReadOfALaterIterationKeepsTheSum) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, R"mlir(
func.func @nk_brgemm(%A: memref<4xf32>, %B: memref<4xf32>, %C: memref<4x20xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = arith.constant 0.0 : f32
  %one = arith.constant dense<1.0> : vector<1x16xf32>
  %sum = memref.alloca() {alignment = 64 : i64, nkbench.c_sum} : memref<4x20xf32>
  scf.for %k = %c0 to %c8 step %c1 {
    %acc = vector.transfer_read %sum[%c0, %c0], %pad {in_bounds = [true, true]} : memref<4x20xf32>, vector<1x16xf32>
    %next = arith.addf %acc, %one : vector<1x16xf32>
    vector.transfer_write %next, %sum[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, memref<4x20xf32>
  }
  %s = vector.transfer_read %sum[%c0, %c0], %pad {in_bounds = [true, true]} : memref<4x20xf32>, vector<1x16xf32>
  %r = arith.truncf %s : vector<1x16xf32> to vector<1x16xbf16>
  vector.transfer_write %r, %C[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xbf16>, memref<4x20xbf16>
  return
}
)mlir");
  ASSERT_TRUE(module);
  const RoundedCStores rounded = roundCAtItsStores(*module, kNative);
  EXPECT_FALSE(rounded.applied);
  EXPECT_EQ(rounded.kept_because, "a read of it may see one of its stores");
}

// A read of C itself after the blocks would see rounded values mid-kernel.
TEST(RoundedCStores, AReadOfCAfterTheStoresKeepsTheSum) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, kernel(R"mlir(
  %seen = vector.transfer_read %C[%c1, %c0], %bf16_pad {in_bounds = [true, true]} : memref<4x20xbf16>, vector<1x16xbf16>
  vector.transfer_write %seen, %C[%c1, %c0] {in_bounds = [true, true]} : vector<1x16xbf16>, memref<4x20xbf16>
)mlir").c_str());
  ASSERT_TRUE(module);
  EXPECT_FALSE(roundCAtItsStores(*module, kNative).applied);
}

TEST(RoundedCStores, AnF32CIsNotTouched) {
  mlir::MLIRContext context;
  auto module = test::parseKernelIr(context, R"mlir(
func.func @nk_brgemm(%A: memref<4xf32>, %B: memref<4xf32>, %C: memref<4x20xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant dense<1.0> : vector<1x16xf32>
  vector.transfer_write %one, %C[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, memref<4x20xf32>
  return
}
)mlir");
  ASSERT_TRUE(module);
  const RoundedCStores rounded = roundCAtItsStores(*module, kNative);
  EXPECT_FALSE(rounded.bf16_c);
  EXPECT_EQ(rounded.summary(), "");
}

}  // namespace
}  // namespace nkbench::mlir_backend
