#include "kernels/mlir/vector/buffer_rewrites/batch_prefetch.h"

#include <algorithm>
#include <vector>

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace nkbench::mlir_backend {
namespace {

using Reads = std::vector<mlir::vector::TransferReadOp>;

constexpr bool kRead = false;
constexpr bool kData = true;
// prefetcht0, for A and B alike: both are read again after the block, A by
// the next call's (a GEMM's next N block, an mlp's, a BRGEMM called again) and
// B by the block rows after it; a streaming hint (prefetchnta) kept A out of
// L2, and those calls read it from L3.
constexpr std::uint32_t kKeepInAllLevels = 3;
constexpr std::size_t kRowDim = 1, kStepDim = 2;  // A is [batch][M][K] or [batch][M][K/2][2]
constexpr std::int64_t kCacheLineBytes = 64;
// A block of fewer rows feeds each B line to fewer FMAs: it streams B faster
// than prefetches ahead of it help, and the hardware prefetchers serve it
// alone as well. Measured on AVX-512 (mlir / libxsmm): 2x64 and 3x64 blocks
// ran 10-25% slower in cache with B prefetched, and no faster from memory,
// where blocks of 4 to 8 rows gained 6-25% from memory.
constexpr std::int64_t kMinRowsToPrefetchB = 4;

struct Operands {
  mlir::Value a, b;
  std::int64_t batch = 0;
  std::int64_t rows = 0;  // M
};

// One K step of a block's code: its reads of A, one per row of the block.
struct Step {
  mlir::Value index;  // along K
  Reads a_reads;
};

std::vector<Step> stepsOf(const Reads& a_reads) {
  std::vector<Step> steps;
  for (mlir::vector::TransferReadOp read : a_reads) {
    const mlir::Value index = read.getIndices()[kStepDim];
    auto same = std::find_if(steps.begin(), steps.end(), [&](const Step& step) { return step.index == index; });
    if (same == steps.end())
      steps.push_back({index, {read}});
    else
      same->a_reads.push_back(read);
  }
  return steps;
}

class PrefetchWriter {
 public:
  PrefetchWriter(mlir::Operation* before, const Operands& operands)
      : builder_(before), loc_(before->getLoc()), operands_(operands) {}

  mlir::Value constant(std::int64_t value) { return mlir::arith::ConstantIndexOp::create(builder_, loc_, value); }
  mlir::Value add(mlir::Value a, mlir::Value b) { return mlir::arith::AddIOp::create(builder_, loc_, a, b); }

  // min(entry + distance, batch - 1): the entry ahead, never past the last.
  mlir::Value entryAhead(mlir::Value entry, std::int64_t distance) {
    return mlir::arith::MinSIOp::create(builder_, loc_, add(entry, constant(distance)), constant(operands_.batch - 1));
  }

  void prefetch(mlir::Value memref, mlir::ValueRange indices) {
    mlir::memref::PrefetchOp::create(builder_, loc_, memref, indices, kRead, kKeepInAllLevels, kData);
  }

  mlir::OpBuilder& builder() { return builder_; }
  mlir::Location loc() const { return loc_; }

 private:
  mlir::OpBuilder builder_;
  mlir::Location loc_;
  const Operands& operands_;
};

// Whether `value`, used inside `loop`, is computed from its induction variable
// through the index arithmetic of its body. Values defined outside the loop
// do not vary with it; block arguments and region results other than the
// induction variable count as not depending (at worst a loop is taken to
// repeat B's lines, and a pass prefetches the line it reads).
bool dependsOn(mlir::Value value, mlir::scf::ForOp loop, llvm::SmallPtrSetImpl<mlir::Value>& seen) {
  if (value == loop.getInductionVar()) return true;
  if (loop.isDefinedOutsideOfLoop(value) || !seen.insert(value).second) return false;
  mlir::Operation* op = value.getDefiningOp();
  return op != nullptr &&
         llvm::any_of(op->getOperands(), [&](mlir::Value operand) { return dependsOn(operand, loop, seen); });
}

bool dependsOn(mlir::ValueRange values, mlir::scf::ForOp loop) {
  llvm::SmallPtrSet<mlir::Value, 16> seen;
  return llvm::any_of(values, [&](mlir::Value value) { return dependsOn(value, loop, seen); });
}

// True on the first pass over B's lines of `read` in every enclosing loop
// that walks a batch chunk's entries again and again (a loop over row bands
// outside the entry loop), where such passes find the chunk's B in cache
// (`later_passes_hit_cache`): prefetching the lines ahead again in every pass
// had cost 4-7% on 64x128x64 b16. Where the bands are inside the entry loop (a
// chunk's B sized by L1), every band keeps prefetching the next entry: after
// the first its prefetches find the lines in L1 (an issue slot each), and the
// first, a whole entry early, gives lines from memory the time they take
// (measured from memory: 5-20% faster than from one band alone, the first or
// the last). Null where every pass runs ahead.
mlir::Value firstPassOverChunk(mlir::vector::TransferReadOp read, PrefetchWriter& writer, bool later_passes_hit_cache) {
  if (!later_passes_hit_cache) return nullptr;
  const mlir::Value entry = read.getIndices()[0];
  mlir::Value first;
  bool entries_change_inside = false;
  for (auto loop = read->getParentOfType<mlir::scf::ForOp>(); loop; loop = loop->getParentOfType<mlir::scf::ForOp>()) {
    if (dependsOn(read.getIndices(), loop)) {
      entries_change_inside = entries_change_inside || dependsOn(entry, loop);
      continue;
    }
    if (!entries_change_inside) continue;
    const mlir::Value is_first = mlir::arith::CmpIOp::create(writer.builder(), writer.loc(), mlir::arith::CmpIPredicate::eq,
                                                             loop.getInductionVar(), loop.getLowerBound());
    first = first ? mlir::arith::AndIOp::create(writer.builder(), writer.loc(), first, is_first) : is_first;
  }
  return first;
}

// B seen flat: the line `steps` K steps ahead of each read's, across entries
// (B's entries follow each other), the start clamped to the read's column of
// the last entry's first row, so that no step passes B's end.
void prefetchBStepsAhead(mlir::vector::TransferReadOp read, const Operands& operands, mlir::Value b_flat,
                         std::int64_t steps, mlir::Value first, PrefetchWriter& w) {
  const auto b_type = llvm::cast<mlir::MemRefType>(operands.b.getType());
  mlir::OpBuilder& b = w.builder();
  const mlir::Location loc = w.loc();
  auto mul = [&](mlir::Value x, std::int64_t by) { return mlir::arith::MulIOp::create(b, loc, x, w.constant(by)); };
  const std::int64_t k_rows = b_type.getDimSize(1);
  std::int64_t row_elements = 1;
  for (std::int64_t d = 2; d < b_type.getRank(); ++d) row_elements *= b_type.getDimSize(d);
  const mlir::ValueRange indices = read.getIndices();
  // The read's element without its K step: entry, then the column (and pair).
  mlir::Value rest = w.constant(0);
  for (std::int64_t d = 2; d < b_type.getRank(); ++d) rest = w.add(mul(rest, b_type.getDimSize(d)), indices[d]);
  const mlir::Value current = w.add(mul(indices[0], k_rows * row_elements), rest);
  const mlir::Value last_entry = w.add(rest, w.constant((b_type.getDimSize(0) - 1) * k_rows * row_elements));
  mlir::Value start =
      mlir::arith::MinSIOp::create(b, loc, w.add(current, w.constant(steps * row_elements)), last_entry);
  if (first) start = mlir::arith::SelectOp::create(b, loc, first, start, current);
  w.prefetch(b_flat, {w.add(start, mul(indices[1], row_elements))});
}

// B: the line each vector read takes, `distance` entries ahead (or K steps
// ahead, where an entry takes far longer than the lead), on the passes chosen
// above; the other passes prefetch the line they read (leaving them without
// would take a second copy of the loop: a prefetch of a line in L1 costs an
// issue slot, measured as noise).
std::int64_t prefetchB(const Reads& reads, std::int64_t block_rows, std::int64_t block_steps, const Operands& operands,
                       const BatchPrefetch& settings, mlir::Value b_flat) {
  // B's vectors per K step: its reads over the K steps of the loop's body.
  const std::int64_t step_fmas = block_rows * std::max<std::int64_t>(1, std::int64_t(reads.size()) / block_steps);
  // The block's reads share its loops (their columns differ by constants): the
  // pass test is made once, at the first, which dominates the others.
  PrefetchWriter first_writer(reads.front(), operands);
  const mlir::Value first = firstPassOverChunk(reads.front(), first_writer, settings.later_passes_hit_cache);
  for (mlir::vector::TransferReadOp read : reads) {
    PrefetchWriter writer(read, operands);
    if (settings.ahead_fmas > 0) {
      const std::int64_t steps = (settings.ahead_fmas + step_fmas - 1) / step_fmas;
      prefetchBStepsAhead(read, operands, b_flat, steps, first, writer);
      continue;
    }
    llvm::SmallVector<mlir::Value> indices(read.getIndices());
    const mlir::Value ahead = writer.entryAhead(indices[0], settings.distance);
    indices[0] = first ? mlir::arith::SelectOp::create(writer.builder(), writer.loc(), first, ahead, indices[0]).getResult()
                       : ahead;
    writer.prefetch(operands.b, indices);
  }
  return std::int64_t(reads.size());
}

// A: per K step, one line of the entry ahead's rows of the block, which are
// contiguous in A: its line `step` (a block of at most a line's elements of
// rows takes every line of them over a K loop). Past the last entry (where
// the block has rows after it), the next rows' first entries: what the next
// block reads. Addressed through A seen flat, so that no step divides.
std::int64_t prefetchA(const std::vector<Step>& steps, const Operands& operands, mlir::Value a_flat,
                       std::int64_t distance) {
  const auto a_type = llvm::cast<mlir::MemRefType>(operands.a.getType());
  std::int64_t row_elements = 1;  // K, or K/2 pairs of 2
  for (std::int64_t d = kRowDim + 1; d < a_type.getRank(); ++d) row_elements *= a_type.getDimSize(d);
  const std::int64_t line_elements = kCacheLineBytes / (a_type.getElementTypeBitWidth() / 8);
  const std::int64_t entry_elements = operands.rows * row_elements;
  for (const Step& step : steps) {
    mlir::vector::TransferReadOp first = step.a_reads.front();
    PrefetchWriter w(first, operands);
    mlir::OpBuilder& b = w.builder();
    const mlir::Location loc = w.loc();
    auto mul = [&](mlir::Value x, std::int64_t by) { return mlir::arith::MulIOp::create(b, loc, x, w.constant(by)); };
    const std::int64_t block_rows = std::int64_t(step.a_reads.size());
    const mlir::ValueRange indices = first.getIndices();
    const mlir::Value ahead = w.add(indices[0], w.constant(distance));
    // The walk's start, (entry ahead * M + first row) * row, is the same at
    // every K step: chosen and kept in bounds once, outside the K loop, so that
    // a step adds only its line to the address (an offset the prefetch folds).
    mlir::Value start = mul(w.add(mul(ahead, operands.rows), indices[kRowDim]), row_elements);
    if (block_rows < operands.rows) {
      const mlir::Value past = mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::sge, ahead,
                                                           w.constant(operands.batch));
      const mlir::Value wrapped = w.add(start, w.constant(block_rows * row_elements - operands.batch * entry_elements));
      start = mlir::arith::SelectOp::create(b, loc, past, wrapped, start);
    }
    const std::int64_t last = operands.batch * entry_elements - 1;
    const std::int64_t walk = (a_type.getDimSize(kStepDim) - 1) * line_elements;  // the last step's line
    mlir::Value flat;
    if (walk <= last) {
      start = mlir::arith::MinSIOp::create(b, loc, start, w.constant(last - walk));
      flat = w.add(start, mul(step.index, line_elements));
    } else {  // A is shorter than one walk: each step is kept in bounds
      flat = mlir::arith::MinSIOp::create(b, loc, w.add(start, mul(step.index, line_elements)), w.constant(last));
    }
    w.prefetch(a_flat, {flat});
  }
  return std::int64_t(steps.size());
}

// An operand (A, B) as one dimension, made at the start of the function.
mlir::Value flatView(mlir::func::FuncOp function, mlir::Value a) {
  mlir::OpBuilder builder(function.getBody());
  const auto type = llvm::cast<mlir::MemRefType>(a.getType());
  mlir::ReassociationIndices all;
  for (std::int64_t d = 0; d < type.getRank(); ++d) all.push_back(d);
  return mlir::memref::CollapseShapeOp::create(builder, function.getLoc(), a, {all});
}

}  // namespace

std::int64_t insertBatchPrefetches(mlir::ModuleOp module, const BatchPrefetch& settings) {
  const std::int64_t distance = settings.distance;
  if (distance < 1) return 0;
  std::int64_t inserted = 0;
  module.walk([&](mlir::func::FuncOp function) {
    if (function.getNumArguments() < 2) return;
    Operands operands{function.getArgument(0), function.getArgument(1)};
    const auto a_type = llvm::dyn_cast<mlir::MemRefType>(operands.a.getType());
    const auto b_type = llvm::dyn_cast<mlir::MemRefType>(operands.b.getType());
    if (!a_type || !b_type || a_type.getRank() < 3 || b_type.getRank() < 3 || !a_type.hasStaticShape()) return;
    operands.batch = a_type.getDimSize(0);
    operands.rows = a_type.getDimSize(1);
    if (operands.batch < 2 || b_type.getDimSize(0) != operands.batch) return;
    // The reads of A and B of each block of code (a loop body), in program order.
    llvm::MapVector<mlir::Block*, std::pair<Reads, Reads>> by_block;
    function.walk([&](mlir::vector::TransferReadOp read) {
      if (read.getBase() == operands.a) by_block[read->getBlock()].first.push_back(read);
      if (read.getBase() == operands.b) by_block[read->getBlock()].second.push_back(read);
    });
    mlir::Value a_flat, b_flat;
    for (const auto& [block, reads] : by_block) {
      if (reads.first.empty() || reads.second.empty()) continue;  // not a reduction step's code
      if (!a_flat) a_flat = flatView(function, operands.a);
      if (!b_flat && settings.ahead_fmas > 0) b_flat = flatView(function, operands.b);
      const std::vector<Step> steps = stepsOf(reads.first);
      inserted += prefetchA(steps, operands, a_flat, distance);
      const std::int64_t block_rows = std::int64_t(steps.front().a_reads.size());
      if (block_rows >= kMinRowsToPrefetchB)
        inserted += prefetchB(reads.second, block_rows, std::int64_t(steps.size()), operands, settings, b_flat);
    }
  });
  return inserted;
}

}  // namespace nkbench::mlir_backend
