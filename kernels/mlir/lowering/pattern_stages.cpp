#include "kernels/mlir/lowering/pattern_stages.h"

#include <memory>
#include <utility>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

// One class for every recipe: the registry keys passes by argument, and a
// pass manager's clones copy the recipe and share the frozen sets.
class PatternStagesPass final : public mlir::PassWrapper<PatternStagesPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PatternStagesPass)
  explicit PatternStagesPass(PatternStages recipe) : recipe_(std::move(recipe)) {}

  llvm::StringRef getArgument() const override { return recipe_.argument; }
  llvm::StringRef getDescription() const override { return recipe_.description; }
  llvm::StringRef getName() const override { return recipe_.argument; }  // in timing reports
  void getDependentDialects(mlir::DialectRegistry& registry) const override { recipe_.dependent_dialects(registry); }

  llvm::LogicalResult initialize(mlir::MLIRContext* context) override {
    auto frozen = std::make_shared<std::vector<mlir::FrozenRewritePatternSet>>();
    for (auto populate : recipe_.stages) {
      mlir::RewritePatternSet patterns(context);
      populate(patterns);
      frozen->emplace_back(std::move(patterns));
    }
    frozen_ = std::move(frozen);
    return llvm::success();
  }

  void runOnOperation() override {
    const mlir::GreedyRewriteConfig config =
        mlir::GreedyRewriteConfig().setRegionSimplificationLevel(mlir::GreedySimplifyRegionLevel::Disabled);
    // Like upstream's passes, a set that does not settle within the driver's
    // rounds is not an error: what it rewrote is still valid IR.
    for (const mlir::FrozenRewritePatternSet& patterns : *frozen_)
      (void)mlir::applyPatternsGreedily(getOperation(), patterns, config);
  }

 private:
  PatternStages recipe_;
  std::shared_ptr<const std::vector<mlir::FrozenRewritePatternSet>> frozen_;
};

}  // namespace

void registerPatternStagesPass(const PatternStages& stages) {
  // MLIR keeps the first registration of an argument (by one pass class).
  mlir::PassRegistration<PatternStagesPass>([stages] { return std::make_unique<PatternStagesPass>(stages); });
}

}  // namespace nkbench::mlir_backend
