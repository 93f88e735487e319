// The clean-ups between and after the transform script's sequences
// (ScheduleCleanup in transform_script.h): greedy canonicalization with the
// groups a schedule asks for, the reads' sinking where asked
// (rewrites/read_sinking.h), then CSE, as transform.apply_patterns and
// transform.apply_cse would apply them, but with each pattern set frozen once
// per compiler and without region simplification. That halved what the two
// clean-ups cost a kernel's schedule, and leaves the machine code as it was.
#pragma once

#include <cstddef>
#include <map>

#include "kernels/mlir/vector/transform_script.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace nkbench::mlir_backend {

class ScheduleCleanupRunner {
 public:
  // Loads the dialects whose ops the patterns create (affine.apply, when
  // slices fold into transfers), which the payload need not load itself.
  explicit ScheduleCleanupRunner(mlir::MLIRContext& context);

  // Applies `cleanup` to every function of `module`. Fails, as
  // transform.apply_patterns does, where the rewrites do not settle.
  mlir::LogicalResult apply(mlir::ModuleOp module, const ScheduleCleanup& cleanup);

 private:
  // What canonicalization gathers from: a dialect loaded or an op registered
  // since a set was frozen means freezing it again.
  struct ContextShape {
    std::size_t dialects = 0, operations = 0;
    bool operator==(const ContextShape&) const = default;
  };
  struct PatternSet {
    ContextShape shape;
    mlir::FrozenRewritePatternSet patterns;
  };
  ContextShape shapeNow();
  const mlir::FrozenRewritePatternSet& patternsFor(const ScheduleCleanup& cleanup);

  mlir::MLIRContext& context_;
  std::map<unsigned, PatternSet> sets_;  // by the cleanup's pattern groups, as bits
};

}  // namespace nkbench::mlir_backend
