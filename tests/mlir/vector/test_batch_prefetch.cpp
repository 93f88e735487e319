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

// A BRGEMM's K loop of one block of `rows` rows (A read per row, one B line
// per K step), in row bands of 8, over a batch of 4 in chunks of 2, B's 32
// columns in two panels. Where `bands_outside`, the loops are chunk -> band ->
// panel -> entry (chunk + e) -> K: each band walks its chunk's entries again.
// Otherwise entry -> band -> panel -> K: all bands take one entry in turn.
std::string kernelIr(const std::string& name, int rows, bool bands_outside) {
  std::string k_body;
  for (int row = 0; row < rows; ++row) {
    const std::string r = std::to_string(row);
    k_body += "          %row" + r + " = arith.addi %band, %c" + r + " : index\n";
    k_body += "          %a" + r + " = vector.transfer_read %A[%entry, %row" + r +
              ", %k], %pad {in_bounds = [true, true, true]} : memref<4x16x8xf32>, vector<1x1x1xf32>\n";
  }
  k_body += "          %b = vector.transfer_read %B[%entry, %k, %panel], %pad {in_bounds = [true, true, true]} : "
            "memref<4x8x32xf32>, vector<1x1x16xf32>\n";
  std::string constants;
  for (int c : {0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32})
    constants += "  %c" + std::to_string(c) + " = arith.constant " + std::to_string(c) + " : index\n";
  const std::string band = "scf.for %band = %c0 to %c16 step %c8 {\n";
  const std::string panel = "scf.for %panel = %c0 to %c32 step %c16 {\n";
  const std::string k_loop = "scf.for %k = %c0 to %c8 step %c1 {\n";
  const std::string loops =
      bands_outside ? "scf.for %chunk = %c0 to %c4 step %c2 {\n" + band + panel +
                          "scf.for %e = %c0 to %c2 step %c1 {\n %entry = arith.addi %chunk, %e : index\n" + k_loop
                    : "scf.for %entry = %c0 to %c4 step %c1 {\n" + band + panel + k_loop;
  const int depth = bands_outside ? 5 : 4;
  std::string closing;
  for (int level = 0; level < depth; ++level) closing += "}\n";
  return "func.func @" + name + "(%A: memref<4x16x8xf32>, %B: memref<4x8x32xf32>, %C: memref<16x32xf32>) {\n" +
         constants + "  %pad = arith.constant 0.0 : f32\n" + loops + k_body + closing + "  return\n}\n";
}

struct Prefetches {
  std::vector<mlir::memref::PrefetchOp> of_a, of_b;
};

Prefetches prefetchesIn(mlir::ModuleOp module, const std::string& function) {
  Prefetches found;
  module.walk([&](mlir::memref::PrefetchOp prefetch) {
    auto owner = prefetch->getParentOfType<mlir::func::FuncOp>();
    if (owner.getSymName() != function) return;
    mlir::Value viewed = prefetch.getMemref();  // an argument, or an argument seen flat
    if (auto flat = viewed.getDefiningOp<mlir::memref::CollapseShapeOp>()) viewed = flat.getSrc();
    (viewed == owner.getArgument(1) ? found.of_b : found.of_a).push_back(prefetch);
  });
  return found;
}

// The kernels above, one entry ahead, with passes over a chunk finding it in
// cache after the first (`later_passes_hit_cache`) or not.
class BatchPrefetch : public ::testing::Test {
 protected:
  mlir::OwningOpRef<mlir::ModuleOp> prefetched(bool later_passes_hit_cache) {
    const std::string source = kernelIr("bands_outside", 8, true) + kernelIr("entries_outside", 8, false) +
                               kernelIr("four_rows", 4, true) + kernelIr("three_rows", 3, true);
    mlir::OwningOpRef<mlir::ModuleOp> module = test::parseKernelIr(context_, source.c_str());
    if (!module) return module;
    inserted_ = insertBatchPrefetches(*module, {.distance = 1, .later_passes_hit_cache = later_passes_hit_cache});
    EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
    return module;
  }

  mlir::MLIRContext context_;
  std::int64_t inserted_ = 0;
};

// The induction variable of the scf.for `levels` loops out from `op`.
mlir::Value enclosingInduction(mlir::Operation* op, int levels) {
  auto loop = op->getParentOfType<mlir::scf::ForOp>();
  for (int level = 1; level < levels; ++level) loop = loop->getParentOfType<mlir::scf::ForOp>();
  return loop.getInductionVar();
}

// Bands outside the entries, the chunk in cache: B's prefetch runs an entry
// ahead in the first band only (select(band == 0, min(entry + 1, 3), entry)),
// whatever the panel; later bands prefetch the line they read.
TEST_F(BatchPrefetch, BandsOutsideTheEntriesPrefetchBAheadOnTheFirstBandOnly) {
  const mlir::OwningOpRef<mlir::ModuleOp> module = prefetched(true);
  ASSERT_TRUE(module);
  Prefetches found = prefetchesIn(*module, "bands_outside");
  ASSERT_EQ(found.of_b.size(), 1u);
  ASSERT_EQ(found.of_a.size(), 1u);  // one per K step
  mlir::memref::PrefetchOp b = found.of_b.front();
  auto select = b.getIndices()[0].getDefiningOp<mlir::arith::SelectOp>();
  ASSERT_TRUE(select) << "B's entry is not chosen per pass";
  auto is_first = select.getCondition().getDefiningOp<mlir::arith::CmpIOp>();
  ASSERT_TRUE(is_first) << "the condition is not one band's test";
  EXPECT_EQ(is_first.getPredicate(), mlir::arith::CmpIPredicate::eq);
  EXPECT_EQ(is_first.getLhs(), enclosingInduction(b, 4));  // k, e, panel, band
  EXPECT_EQ(mlir::getConstantIntValue(is_first.getRhs()), 0);
  const mlir::Value entry = select.getFalseValue();
  ASSERT_TRUE(entry.getDefiningOp<mlir::arith::AddIOp>());  // chunk + e: the line it reads
  auto ahead = select.getTrueValue().getDefiningOp<mlir::arith::MinSIOp>();
  ASSERT_TRUE(ahead);
  EXPECT_EQ(mlir::getConstantIntValue(ahead.getRhs()), 3);  // never past the last entry
}

// Whether `function`'s one B prefetch runs ahead on every pass: its entry is
// min(entry + distance, last), chosen by no pass.
bool bRunsAheadOnEveryPass(mlir::ModuleOp module, const std::string& function) {
  Prefetches found = prefetchesIn(module, function);
  return found.of_b.size() == 1 && found.of_b.front().getIndices()[0].getDefiningOp<mlir::arith::MinSIOp>();
}

// Entries outside the bands: each entry's B stays in L1 for all its bands, and
// every band prefetches the next entry's lines (from memory a whole entry early).
TEST_F(BatchPrefetch, EntriesOutsideTheBandsPrefetchBAheadOnEveryBand) {
  const mlir::OwningOpRef<mlir::ModuleOp> module = prefetched(true);
  ASSERT_TRUE(module);
  EXPECT_TRUE(bRunsAheadOnEveryPass(*module, "entries_outside"));
}

// A chunk that leaves the cache between bands: every band runs ahead.
TEST_F(BatchPrefetch, ChunksBeyondTheCachePrefetchBAheadOnEveryBand) {
  const mlir::OwningOpRef<mlir::ModuleOp> module = prefetched(false);
  ASSERT_TRUE(module);
  EXPECT_TRUE(bRunsAheadOnEveryPass(*module, "bands_outside"));
}

// K steps ahead: B seen flat, each read's line as many steps (of 32 elements)
// on as take the block 24 vector FMAs (3 steps of 8 rows), across entries,
// from a start chosen outside the K loop.
TEST_F(BatchPrefetch, LongEntriesPrefetchBKStepsAheadAcrossEntries) {
  mlir::OwningOpRef<mlir::ModuleOp> module = test::parseKernelIr(context_, kernelIr("k_steps", 8, false).c_str());
  ASSERT_TRUE(module);
  EXPECT_EQ(insertBatchPrefetches(*module, {.distance = 1, .later_passes_hit_cache = true, .ahead_fmas = 24}), 2);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module)));
  Prefetches found = prefetchesIn(*module, "k_steps");
  ASSERT_EQ(found.of_a.size(), 1u);
  ASSERT_EQ(found.of_b.size(), 1u);
  mlir::memref::PrefetchOp b_prefetch = found.of_b.front();
  ASSERT_TRUE(b_prefetch.getMemref().getDefiningOp<mlir::memref::CollapseShapeOp>()) << "B is not seen flat";
  auto address = b_prefetch.getIndices()[0].getDefiningOp<mlir::arith::AddIOp>();
  ASSERT_TRUE(address);
  auto step = address.getRhs().getDefiningOp<mlir::arith::MulIOp>();
  ASSERT_TRUE(step);
  EXPECT_EQ(step.getLhs(), enclosingInduction(b_prefetch, 1));  // k
  EXPECT_EQ(mlir::getConstantIntValue(step.getRhs()), 32);      // a row of B
  auto start = address.getLhs().getDefiningOp<mlir::arith::MinSIOp>();
  ASSERT_TRUE(start);
  auto ahead = start.getLhs().getDefiningOp<mlir::arith::AddIOp>();
  ASSERT_TRUE(ahead);
  EXPECT_EQ(mlir::getConstantIntValue(ahead.getRhs()), 3 * 32);
  // At most the read's column of the last entry's first row: its 8 steps stay in B.
  auto last_entry = start.getRhs().getDefiningOp<mlir::arith::AddIOp>();
  ASSERT_TRUE(last_entry);
  EXPECT_EQ(mlir::getConstantIntValue(last_entry.getRhs()), 3 * 8 * 32);
}

// A block of 3 rows uses each B line for 3 FMAs and streams B faster than
// prefetches help: it prefetches A only. From 4 rows, B too.
TEST_F(BatchPrefetch, BlocksOfFewerThanFourRowsPrefetchAOnly) {
  const mlir::OwningOpRef<mlir::ModuleOp> module = prefetched(true);
  ASSERT_TRUE(module);
  const Prefetches three = prefetchesIn(*module, "three_rows");
  EXPECT_EQ(three.of_b.size(), 0u);
  EXPECT_EQ(three.of_a.size(), 1u);
  const Prefetches four = prefetchesIn(*module, "four_rows");
  EXPECT_EQ(four.of_b.size(), 1u);
  EXPECT_EQ(four.of_a.size(), 1u);
  EXPECT_EQ(inserted_, 2 + 2 + 2 + 1);
}

}  // namespace
}  // namespace nkbench::mlir_backend
