// The clean-ups between and after the transform script's sequences
// (ScheduleCleanup in transform_script.h): greedy canonicalization with the
// groups a schedule asks for, then CSE, as transform.apply_patterns and
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

class ScheduleCleanups {
 public:
  explicit ScheduleCleanups(mlir::MLIRContext& context) : context_(context) {}

  // Applies `cleanup` to every function of `module`.
  void apply(mlir::ModuleOp module, const ScheduleCleanup& cleanup);

 private:
  struct PatternSet {
    std::size_t loaded_dialects = 0;  // canonicalization covers these: a dialect loaded since means a new set
    mlir::FrozenRewritePatternSet patterns;
  };
  const mlir::FrozenRewritePatternSet& patternsFor(const ScheduleCleanup& cleanup);

  mlir::MLIRContext& context_;
  std::map<unsigned, PatternSet> sets_;  // by the cleanup's pattern groups, as bits
};

}  // namespace nkbench::mlir_backend
