#include "kernels/mlir/vector/rewrites/read_sinking.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace nkbench::mlir_backend {
namespace {

bool isTensorRead(mlir::Operation* op) {
  auto read = llvm::dyn_cast<mlir::vector::TransferReadOp>(op);
  return read && llvm::isa<mlir::RankedTensorType>(read.getBase().getType());
}

bool usesRead(mlir::Operation* op, mlir::Operation* read) { return llvm::is_contained(read->getUsers(), op); }

// Whether `op` uses `read` inside one of its regions.
bool usesReadWithin(mlir::Operation* op, mlir::Operation* read) {
  return llvm::any_of(read->getUsers(), [&](mlir::Operation* user) { return op->isProperAncestor(user); });
}

// Whether `op` writes into the tensor `read` reads (it is that tensor's
// destination).
bool writesReadTensor(mlir::Operation* op, mlir::vector::TransferReadOp read) {
  auto destination_style = llvm::dyn_cast<mlir::DestinationStyleOpInterface>(op);
  return destination_style && llvm::any_of(destination_style.getDpsInits(),
                                           [&](mlir::Value init) { return init == read.getBase(); });
}

// The first op after `read` in its block that takes its value, where the read
// may move to it; else null.
mlir::Operation* sinkTarget(mlir::vector::TransferReadOp read) {
  for (mlir::Operation* op = read->getNextNode(); op; op = op->getNextNode()) {
    if (usesRead(op, read)) return op;
    if (usesReadWithin(op, read) || writesReadTensor(op, read)) return nullptr;
  }
  return nullptr;
}

// Whether only reads that `user` takes too lie between `read` and `user`:
// sunk already, in their order.
bool inPlace(mlir::Operation* read, mlir::Operation* user) {
  for (mlir::Operation* op = read->getNextNode(); op != user; op = op->getNextNode())
    if (!isTensorRead(op) || !usesRead(user, op)) return false;
  return true;
}

}  // namespace

std::int64_t sinkTensorReadsToFirstUse(mlir::Operation* root) {
  // Gathered first, in program order: moving a read must not make the walk
  // visit it, or the reads after it, again.
  llvm::SmallVector<mlir::vector::TransferReadOp> reads;
  root->walk([&](mlir::vector::TransferReadOp read) {
    if (isTensorRead(read)) reads.push_back(read);
  });
  std::int64_t moved = 0;
  for (mlir::vector::TransferReadOp read : reads) {
    mlir::Operation* user = sinkTarget(read);
    if (!user || inPlace(read, user)) continue;
    read->moveBefore(user);
    ++moved;
  }
  return moved;
}

}  // namespace nkbench::mlir_backend
