#include "kernels/mlir/vector/rewrites/read_sinking.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace nkbench::mlir_backend {
namespace {

bool isTensorRead(mlir::Operation* op) {
  auto read = llvm::dyn_cast<mlir::vector::TransferReadOp>(op);
  return read && llvm::isa<mlir::RankedTensorType>(read.getBase().getType());
}

bool usesRead(mlir::Operation* op, mlir::Operation* read) { return llvm::is_contained(read->getUsers(), op); }

// The first op after `read` in its block that takes its value, or null.
mlir::Operation* firstUserAfter(mlir::Operation* read) {
  for (mlir::Operation* op = read->getNextNode(); op; op = op->getNextNode())
    if (usesRead(op, read)) return op;
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
  llvm::SmallVector<mlir::Operation*> reads;
  root->walk([&](mlir::vector::TransferReadOp read) {
    if (isTensorRead(read)) reads.push_back(read);
  });
  std::int64_t moved = 0;
  for (mlir::Operation* read : reads) {
    mlir::Operation* user = firstUserAfter(read);
    if (!user || inPlace(read, user)) continue;
    read->moveBefore(user);
    ++moved;
  }
  return moved;
}

}  // namespace nkbench::mlir_backend
