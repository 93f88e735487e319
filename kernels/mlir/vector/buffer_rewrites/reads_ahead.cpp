#include "kernels/mlir/vector/buffer_rewrites/reads_ahead.h"

#include <vector>

#include "kernels/mlir/vector/buffer_rewrites/transfer_overlap.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace nkbench::mlir_backend {
namespace {

// Whether `op` touches no memory, or only reads it.
bool writesNoMemory(mlir::Operation* op) {
  if (mlir::isMemoryEffectFree(op)) return true;
  auto effects = llvm::dyn_cast<mlir::MemoryEffectOpInterface>(op);
  return effects && effects.onlyHasEffect<mlir::MemoryEffects::Read>();
}

bool makesAnOperandOf(mlir::Operation* op, mlir::Operation* user) {
  return llvm::any_of(op->getResults(), [&](mlir::Value result) { return llvm::is_contained(user->getOperands(), result); });
}

// The earliest of the writes just before `read` that miss it, or null.
mlir::Operation* earliestMissedWrite(mlir::vector::TransferReadOp read) {
  const TransferSpan span = spanOf(llvm::cast<mlir::VectorTransferOpInterface>(read.getOperation()));
  mlir::Operation* earliest = nullptr;
  for (mlir::Operation* op = read->getPrevNode(); op && !makesAnOperandOf(op, read); op = op->getPrevNode()) {
    if (auto write = llvm::dyn_cast<mlir::vector::TransferWriteOp>(op)) {
      if (mayOverlap(spanOf(llvm::cast<mlir::VectorTransferOpInterface>(op)), span)) break;
      earliest = op;
    } else if (!writesNoMemory(op)) {
      break;
    }
  }
  return earliest;
}

}  // namespace

std::int64_t moveReadsAheadOfMissedWrites(mlir::ModuleOp module) {
  std::vector<mlir::vector::TransferReadOp> reads;
  module.walk([&](mlir::vector::TransferReadOp read) {
    if (llvm::isa<mlir::MemRefType>(read.getBase().getType())) reads.push_back(read);
  });
  std::int64_t moved = 0;
  for (mlir::vector::TransferReadOp read : reads)
    if (mlir::Operation* write = earliestMissedWrite(read)) {
      read->moveBefore(write);
      ++moved;
    }
  return moved;
}

}  // namespace nkbench::mlir_backend
