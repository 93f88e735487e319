#include <gtest/gtest.h>

#include "kernels/mlir/nanokernel_check.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "kernels/mlir/vector/transform_script.h"

namespace nkbench::mlir_backend {
namespace {

Problem problemOf(std::int64_t m, std::int64_t n, std::int64_t k) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = 2;
  return p;
}

// K of 64 steps: a K loop that stays a loop (short ones are unrolled whole),
// here of one step per iteration, so that the counts below are per K step.
RegisterBlockPlan planFor(std::int64_t m, std::int64_t n, std::int64_t k = 64) {
  RegisterBlockPlan plan = planRegisterBlocks(problemOf(m, n, k), selectSchedule(Isa::Avx512, DType::F32));
  if (plan.k_steps > 8) plan.k_unroll = 1;
  return plan;
}

TEST(NanokernelCheck, ExpectsOneFmaPerAccumulatorVector) {
  EXPECT_EQ(expectedNanokernels(planFor(8, 32)).fma, 16);
  EXPECT_EQ(expectedNanokernels(planFor(16, 64)).fma, 16);  // one block body, looped
  // 7 rows x (2 whole vectors + 1 masked to one lane): the edge is a nanokernel too.
  const NanokernelExpectation edge = expectedNanokernels(planFor(7, 33));
  EXPECT_EQ(edge.fma, 21);
  EXPECT_EQ(edge.masked, 7);
  EXPECT_EQ(edge.scalar_tail, 0);
}

// A K loop of 4 steps is unrolled whole: 4 copies of every nanokernel.
TEST(NanokernelCheck, CountsTheCopiesOfAnUnrolledKLoop) {
  const RegisterBlockPlan plan = planFor(8, 32, 4);
  EXPECT_EQ(plan.k_unroll, 4);
  EXPECT_EQ(plan.kStepCopies(), 4);
  EXPECT_EQ(expectedNanokernels(plan).fma, 64);
  EXPECT_EQ(expectedNanokernels(planFor(8, 32, 64)).fma, 16);
  // The planner unrolls a longer K loop by 2: two copies, and a third for an odd remainder.
  const CacheSizes caches;
  const Schedule schedule = selectSchedule(Isa::Avx512, DType::F32);
  EXPECT_EQ(planRegisterBlocks(problemOf(8, 32, 64), schedule, caches).kStepCopies(), 2);
  EXPECT_EQ(expectedNanokernels(planRegisterBlocks(problemOf(8, 32, 64), schedule, caches)).fma, 32);
  EXPECT_EQ(planRegisterBlocks(problemOf(8, 32, 15), schedule, caches).kStepCopies(), 3);
  // Unrolled by a factor that leaves a remainder: the body, then one copy in the remainder's loop.
  RegisterBlockPlan partial = planFor(8, 32, 15);
  partial.k_unroll = 4;
  EXPECT_EQ(partial.kStepCopies(), 5);
}

// A masked edge must lower to a masked store per masked accumulator.
TEST(NanokernelCheck, MaskedEdgesMustLowerToMaskedStores) {
  const RegisterBlockPlan plan = planFor(7, 33);
  const OpCounts scheduled = {{"vector.fma", 21}};
  const OpCounts lowered = {{"llvm.intr.fma", 21}, {"llvm.intr.masked.load", 1}, {"llvm.intr.masked.store", 7}};
  const NanokernelEvidence ok = checkNanokernels(Lowering::Nanokernel, plan, scheduled, lowered);
  EXPECT_TRUE(ok.composed) << ok.summary;
  EXPECT_NE(ok.summary.find("7 on masked edges"), std::string::npos) << ok.summary;
  OpCounts unmasked_stores = lowered;
  unmasked_stores["llvm.intr.masked.store"] = 0;
  EXPECT_FALSE(checkNanokernels(Lowering::Nanokernel, plan, scheduled, unmasked_stores).composed);
  OpCounts fewer_stores = lowered;
  fewer_stores["llvm.intr.masked.store"] = 6;
  EXPECT_FALSE(checkNanokernels(Lowering::Nanokernel, plan, scheduled, fewer_stores).composed);
}

TEST(NanokernelCheck, AcceptsExactlyTheExpectedComposition) {
  const RegisterBlockPlan plan = planFor(8, 32);
  const NanokernelEvidence ok =
      checkNanokernels(Lowering::Nanokernel, plan, {{"vector.fma", 16}}, {{"llvm.intr.fma", 16}});
  EXPECT_TRUE(ok.composed) << ok.summary;
}

TEST(NanokernelCheck, RejectsAFallbackToGenericContractions) {
  const RegisterBlockPlan plan = planFor(8, 32);
  EXPECT_FALSE(checkNanokernels(Lowering::Nanokernel, plan, {{"vector.contract", 16}}, {}).composed);
  EXPECT_FALSE(
      checkNanokernels(Lowering::Nanokernel, plan, {{"vector.fma", 8}, {"vector.contract", 8}}, {{"llvm.intr.fma", 8}})
          .composed);
  // FMAs that vanish on the way to LLVM do not count.
  EXPECT_FALSE(checkNanokernels(Lowering::Nanokernel, plan, {{"vector.fma", 16}}, {}).composed);
}

TEST(NanokernelCheck, Bf16CountsDotProductsNotFmas) {
  RegisterBlockPlan plan = planFor(8, 32);
  plan.nanokernel = NanokernelKind::Bf16Dot;
  const OpCounts lowered = {{"llvm.call_intrinsic:llvm.x86.avx512bf16.dpbf16ps.512", 16}};
  EXPECT_TRUE(checkNanokernels(Lowering::Nanokernel, plan, {{"x86vector.avx512.dot", 16}}, lowered).composed);
  EXPECT_FALSE(checkNanokernels(Lowering::Nanokernel, plan, {{"vector.fma", 16}}, lowered).composed);
  EXPECT_FALSE(checkNanokernels(Lowering::Nanokernel, plan, {{"x86vector.avx512.dot", 16}}, {}).composed);
}

TEST(NanokernelCheck, DescribesEdgeBlocks) {
  EXPECT_EQ(describeRegisterBlocks(planFor(8, 32)), "8x32");
  EXPECT_EQ(describeRegisterBlocks(planFor(7, 33)), "7x33");
  EXPECT_EQ(describeRegisterBlocks(planFor(25, 18)), "13x18+12x18");
  EXPECT_EQ(describeRegisterBlocks(planFor(8, 49)), "8x32+8x17");
}

TEST(TransformScript, NanokernelScriptRewritesContractionsAndGenericDoesNot) {
  Problem p;
  p.m = 8;
  p.n = 32;
  p.k = 4;
  p.batch = 2;
  const RegisterBlockPlan plan = planRegisterBlocks(p, selectSchedule(Isa::Avx512, DType::F32));
  const TransformSchedule nano_schedule = buildTransformSchedule(p, plan, Lowering::Nanokernel);
  const TransformSchedule generic_schedule = buildTransformSchedule(p, plan, Lowering::GenericVector);
  const std::string& nano = nano_schedule.script;
  const std::string& generic = generic_schedule.script;
  EXPECT_NE(nano.find("x86vector.vector_contract_to_fma"), std::string::npos);
  EXPECT_EQ(generic.find("x86vector"), std::string::npos);
  EXPECT_NE(nano.find("tile_sizes [0, 8, 32, 0]"), std::string::npos);
  EXPECT_NE(nano.find("tile_sizes [0, 1, 16, 0]"), std::string::npos);
  EXPECT_NE(nano.find("hoist_loop_invariant_subsets"), std::string::npos);
  // Tiled, cleaned up with the slices folded into the transfers; composed, cleaned up again.
  for (const TransformSchedule* schedule : {&nano_schedule, &generic_schedule}) {
    ASSERT_EQ(schedule->steps.size(), 2u);
    EXPECT_TRUE(schedule->steps[0].cleanup.fold_tensor_subsets);
    EXPECT_FALSE(schedule->steps[1].cleanup.fold_tensor_subsets);
    for (const TransformSchedule::Step& step : schedule->steps) {
      EXPECT_NE(schedule->script.find("transform.named_sequence @" + step.sequence + "("), std::string::npos);
      EXPECT_NE(schedule->script.find(step.cleanup.describe()), std::string::npos) << "named in the script's comments";
    }
  }
  EXPECT_TRUE(nano_schedule.steps[1].cleanup.sink_vector_producers);
  EXPECT_FALSE(generic_schedule.steps[1].cleanup.sink_vector_producers);
  EXPECT_FALSE(nano_schedule.steps[0].cleanup.fold_arith_extension) << "f32 has no extension to fold";
  EXPECT_EQ(plan.split.ways, 1);
  EXPECT_FALSE(nano_schedule.steps[1].cleanup.lower_multi_reduction) << "no partial sums to add";
}

// A bf16 C: the kernel sums in an f32 buffer on its stack, widens C into it under
// beta 1 only, and rounds it into C; the schedule vectorizes both conversions a
// vector of a row at a time.
TEST(TransformScript, Bf16CIsWidenedAndRoundedByVectorizedConversions) {
  Problem p;
  p.dtype = DType::BF16;
  p.c_dtype = DType::BF16;
  p.m = 8;
  p.n = 32;
  p.k = 4;
  p.batch = 2;
  for (bool accumulate : {false, true}) {
    p.accumulate = accumulate;
    const RegisterBlockPlan plan = planRegisterBlocks(p, selectSchedule(Isa::Avx512Bf16, DType::BF16));
    const std::string payload = buildPayload(p, plan);
    const TransformSchedule schedule = buildTransformSchedule(p, plan, Lowering::Nanokernel);
    const std::string& script = schedule.script;
    EXPECT_NE(payload.find("%C: memref<8x32xbf16>"), std::string::npos);
    EXPECT_NE(payload.find("memref.alloca() {alignment = 64 : i64, nkbench.c_sum} : memref<8x32xf32>"), std::string::npos);
    EXPECT_NE(payload.find("arith.truncf"), std::string::npos);
    EXPECT_EQ(payload.find("arith.extf") != std::string::npos, accumulate);
    EXPECT_EQ(script.find(kCPrologue) != std::string::npos, accumulate);
    EXPECT_NE(script.find(kCEpilogue), std::string::npos);
    EXPECT_NE(script.find("tile_sizes [1, 16]"), std::string::npos);
    EXPECT_TRUE(schedule.steps.front().cleanup.fold_arith_extension) << "the widening folds into the dot product";
  }
}

// The tile check: every product lowered, and none on tiles LLVM allocates (its
// ".internal" intrinsics, which it configures and releases at every call).
TEST(NanokernelCheck, TileKernelsNameTheirRegisters) {
  const OpCounts payload = {{"llvm.call_intrinsic:llvm.x86.tdpbf16ps", 4}};
  EXPECT_TRUE(checkAmxTiles(4, payload, payload).composed);
  EXPECT_FALSE(checkAmxTiles(8, payload, payload).composed);
  const OpCounts managed = {{"llvm.call_intrinsic:llvm.x86.tdpbf16ps", 4},
                            {"llvm.call_intrinsic:llvm.x86.tileloadd64.internal", 1}};
  const NanokernelEvidence evidence = checkAmxTiles(4, payload, managed);
  EXPECT_FALSE(evidence.composed);
  EXPECT_EQ(evidence.summary, "NOT-composed: 4 tdpbf16ps (expected 4), 4 lowered, 1 on registers LLVM allocates");
}

TEST(NanokernelCheck, EmulatedTileKernelsCallTheEmulatorAndNoAmxInstruction) {
  const OpCounts payload = {{"func.call:@nkbench_amx_emulated_tdpbf16ps", 4}};
  const OpCounts lowered = {{"llvm.call:@nkbench_amx_emulated_tdpbf16ps", 4}};
  EXPECT_TRUE(checkEmulatedAmxTiles(4, payload, lowered).composed);
  OpCounts leaked = lowered;
  leaked["llvm.call_intrinsic:llvm.x86.tdpbf16ps"] = 1;
  EXPECT_FALSE(checkEmulatedAmxTiles(4, payload, leaked).composed);
}

// The tile route's epilogue: one bias add and one maximum per region's row
// loop, as many as the layer asks for; a missing or doubled one is not fused.
TEST(NanokernelCheck, TileEpilogueHasOneRowPassPerRegion) {
  MlpLayers bias_relu;
  bias_relu.bias = true;
  bias_relu.activation = Activation::Relu;
  const OpCounts two_regions = {{"arith.addf", 2}, {"arith.maximumf", 2}};
  const NanokernelEvidence fused = checkAmxEpilogue(bias_relu, 2, two_regions);
  EXPECT_TRUE(fused.composed);
  EXPECT_EQ(fused.summary,
            "epilogue bias+relu fused into 2 tile regions' f32 rows after their tile stores: 2 bias adds, 2 maxima "
            "(expected 2, 2)");
  EXPECT_FALSE(checkAmxEpilogue(bias_relu, 3, two_regions).composed);
  MlpLayers relu_only = bias_relu;
  relu_only.bias = false;
  EXPECT_FALSE(checkAmxEpilogue(relu_only, 2, two_regions).composed);
  EXPECT_TRUE(checkAmxEpilogue(relu_only, 2, {{"arith.maximumf", 2}}).composed);
}

}  // namespace
}  // namespace nkbench::mlir_backend
