#include "kernels/mlir/lowering/vector_lowering.h"

#include "kernels/mlir/lowering/pattern_stages.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Config/llvm-config.h"

// The pattern lists below are those of MLIR 22's passes: another MLIR may have
// changed them (ToLlvm.PipelineLowersAKernelAsTheUpstreamPassesItStandsForDo
// compares), so a new major version asks for them to be read again.
static_assert(LLVM_VERSION_MAJOR == 22, "compare the recipes with this MLIR's convert-vector-to-scf, "
                                        "expand-strided-metadata and convert-vector-to-llvm");

namespace nkbench::mlir_backend {
namespace {

void vectorToScfDialects(mlir::DialectRegistry& registry) {
  registry.insert<mlir::affine::AffineDialect, mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect>();
}

void expandStridedMetadataDialects(mlir::DialectRegistry& registry) {
  registry.insert<mlir::affine::AffineDialect, mlir::memref::MemRefDialect>();
}

void lowerVectorOpsDialects(mlir::DialectRegistry& registry) {
  registry.insert<mlir::arith::ArithDialect, mlir::memref::MemRefDialect, mlir::tensor::TensorDialect>();
}

// convert-vector-to-llvm's first step with its default options: contractions
// lowered to dot products, transposes element-wise, 32-bit mask indices.
void lowerVectorOps(mlir::RewritePatternSet& patterns) {
  using namespace mlir::vector;
  populateVectorToVectorCanonicalizationPatterns(patterns);
  populateVectorBitCastLoweringPatterns(patterns);
  populateVectorBroadcastLoweringPatterns(patterns);
  populateVectorContractLoweringPatterns(patterns, VectorContractLowering::Dot);
  populateVectorMaskOpLoweringPatterns(patterns);
  populateVectorShapeCastLoweringPatterns(patterns);
  populateVectorInterleaveLoweringPatterns(patterns);
  populateVectorTransposeLoweringPatterns(patterns, VectorTransposeLowering::EltWise);
  // Transfers of rank > 1 were unrolled by nkbench-vector-to-scf.
  populateVectorTransferLoweringPatterns(patterns, /*maxTransferRank=*/1);
  populateVectorMaskMaterializationPatterns(patterns, /*force32BitVectorIndices=*/true);
  populateVectorInsertExtractStridedSliceTransforms(patterns);
  populateVectorStepLoweringPatterns(patterns);
  populateVectorRankReducingFMAPattern(patterns);
  populateVectorGatherLoweringPatterns(patterns);
  populateVectorFromElementsUnrollPatterns(patterns);
  populateVectorToElementsUnrollPatterns(patterns);
}

}  // namespace

void registerVectorLoweringPasses() {
  registerPatternStagesPass({kVectorToScfPass,
                             "n-D vector transfers to 1-D ones, fully unrolled (convert-vector-to-scf{full-unroll=true})",
                             vectorToScfDialects,
                             {
                                 [](mlir::RewritePatternSet& patterns) {
                                   mlir::vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
                                 },
                                 [](mlir::RewritePatternSet& patterns) {
                                   mlir::populateVectorToSCFConversionPatterns(
                                       patterns, mlir::VectorTransferToSCFOptions().enableFullUnroll());
                                 },
                             }});
  registerPatternStagesPass({kExpandStridedMetadataPass, "memref subviews as offsets and strides (expand-strided-metadata)",
                             expandStridedMetadataDialects,
                             {[](mlir::RewritePatternSet& patterns) {
                               mlir::memref::populateExpandStridedMetadataPatterns(patterns);
                             }}});
  registerPatternStagesPass({kLowerVectorOpsPass,
                             "vector ops lowered to those the LLVM conversion handles (convert-vector-to-llvm's first step)",
                             lowerVectorOpsDialects,
                             {lowerVectorOps}});
}

}  // namespace nkbench::mlir_backend
