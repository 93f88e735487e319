// Software prefetches of the batch entries ahead (batch_prefetch.h): which
// reads get them, and on which passes B's run ahead.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/mlir/vector/buffer_rewrites/batch_prefetch.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "tests/support/kernel_ir.h"

namespace nkbench::mlir_backend {
namespace {

// A BRGEMM's K loop of one block of `rows` rows (A read per row, one B line),
// in a loop over two row bands, with the batch entries' loop inside the band
// loop (@bands_outside: a chunk's B walked once per band) or outside it
// (@entries_outside); @short_block: a 3-row block.
std::string kernelIr(const std::string& name, int rows, bool bands_outside) {
  std::string k_body;
  for (int row = 0; row < rows; ++row) {
    const std::string r = std::to_string(row);
    k_body += "        %row" + r + " = arith.addi %band, %c" + r + " : index\n";
    k_body += "        %a" + r + " = vector.transfer_read %A[%e, %row" + r +
              ", %k], %pad {in_bounds = [true, true, true]} : memref<4x16x8xf32>, vector<1x1x1xf32>\n";
  }
  k_body += "        %b = vector.transfer_read %B[%e, %k, %c0], %pad {in_bounds = [true, true, true]} : "
            "memref<4x8x32xf32>, vector<1x1x16xf32>\n";
  const std::string band_loop = "scf.for %band = %c0 to %c16 step %c8 {\n";
  const std::string entry_loop = "scf.for %e = %c0 to %c4 step %c1 {\n";
  std::string constants;
  for (int c : {0, 1, 2, 3, 4, 5, 6, 7, 8, 16}) constants += "  %c" + std::to_string(c) + " = arith.constant " +
                                                            std::to_string(c) + " : index\n";
  return "func.func @" + name + "(%A: memref<4x16x8xf32>, %B: memref<4x8x32xf32>, %C: memref<16x32xf32>) {\n" +
         constants + "  %pad = arith.constant 0.0 : f32\n  " + (bands_outside ? band_loop : entry_loop) + "    " +
         (bands_outside ? entry_loop : band_loop) + "      scf.for %k = %c0 to %c8 step %c1 {\n" + k_body +
         "      }\n    }\n  }\n  return\n}\n";
}

struct Prefetches {
  std::vector<mlir::memref::PrefetchOp> of_a, of_b;
};

Prefetches prefetchesIn(mlir::ModuleOp module, const std::string& function) {
  Prefetches found;
  module.walk([&](mlir::memref::PrefetchOp prefetch) {
    auto owner = prefetch->getParentOfType<mlir::func::FuncOp>();
    if (owner.getSymName() != function) return;
    (prefetch.getMemref() == owner.getArgument(1) ? found.of_b : found.of_a).push_back(prefetch);
  });
  return found;
}

class BatchPrefetch : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string source = kernelIr("bands_outside", 8, true) + kernelIr("entries_outside", 8, false) +
                               kernelIr("short_block", 3, true);
    module_ = test::parseKernelIr(context_, source.c_str());
    ASSERT_TRUE(module_);
    inserted_ = insertBatchPrefetches(*module_, 1);
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module_)));
  }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::int64_t inserted_ = 0;
};

// The induction variable of the scf.for that holds `op`, `levels` loops out.
mlir::Value enclosingInduction(mlir::Operation* op, int levels) {
  auto loop = op->getParentOfType<mlir::scf::ForOp>();
  for (int level = 1; level < levels; ++level) loop = loop->getParentOfType<mlir::scf::ForOp>();
  return loop.getInductionVar();
}

// Bands outside the entries: B's prefetch runs an entry ahead in the first
// band only (select(band == 0, min(e + 1, 3), e)); the later bands prefetch
// the line they read, which the first band's prefetches brought in.
TEST_F(BatchPrefetch, BandsOutsideTheEntriesPrefetchBAheadOnTheFirstBandOnly) {
  const Prefetches found = prefetchesIn(*module_, "bands_outside");
  ASSERT_EQ(found.of_b.size(), 1u);
  ASSERT_EQ(found.of_a.size(), 1u);  // one per K step
  mlir::memref::PrefetchOp b = found.of_b.front();
  auto select = b.getIndices()[0].getDefiningOp<mlir::arith::SelectOp>();
  ASSERT_TRUE(select) << "B's entry is not chosen per pass";
  auto is_first = select.getCondition().getDefiningOp<mlir::arith::CmpIOp>();
  ASSERT_TRUE(is_first);
  EXPECT_EQ(is_first.getPredicate(), mlir::arith::CmpIPredicate::eq);
  const mlir::Value band = enclosingInduction(b, 3), entry = enclosingInduction(b, 2);
  EXPECT_EQ(is_first.getLhs(), band);
  EXPECT_EQ(mlir::getConstantIntValue(is_first.getRhs()), 0);
  EXPECT_EQ(select.getFalseValue(), entry);
  auto ahead = select.getTrueValue().getDefiningOp<mlir::arith::MinSIOp>();
  ASSERT_TRUE(ahead);
  EXPECT_EQ(mlir::getConstantIntValue(ahead.getRhs()), 3);  // the last entry
}

// Entries outside the bands: each entry's B stays in L1 for all its bands, and
// every band prefetches the next entry's lines (the first from memory, the
// others then hits).
TEST_F(BatchPrefetch, EntriesOutsideTheBandsPrefetchBAheadOnEveryBand) {
  Prefetches found = prefetchesIn(*module_, "entries_outside");
  ASSERT_EQ(found.of_b.size(), 1u);
  EXPECT_TRUE(found.of_b.front().getIndices()[0].getDefiningOp<mlir::arith::MinSIOp>());
}

// A block of 3 rows uses each B line for 3 FMAs and streams B faster than
// prefetches help: it prefetches A only.
TEST_F(BatchPrefetch, BlocksOfFewerThanFourRowsPrefetchAOnly) {
  const Prefetches found = prefetchesIn(*module_, "short_block");
  EXPECT_EQ(found.of_b.size(), 0u);
  EXPECT_EQ(found.of_a.size(), 1u);
  EXPECT_EQ(inserted_, 2 + 2 + 1);
}

}  // namespace
}  // namespace nkbench::mlir_backend
