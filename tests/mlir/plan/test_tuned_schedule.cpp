// A tuning file's schedule is checked against its class: the type the class
// names and the ISA level it was tuned under; errors name the file and class.
#include <gtest/gtest.h>

#include "kernels/mlir/tuning/shape_class.h"
#include "kernels/mlir/tuning/tuned_schedule.h"

namespace nkbench::mlir_backend {
namespace {

TEST(TunedSchedule, TheClassNamesItsType) {
  EXPECT_EQ(shapeClassDType("brgemm bf16 m8-31 n16-63 l1"), DType::BF16);
  EXPECT_EQ(shapeClassDType("gemm f32 m32+ n64+ mem"), DType::F32);
  EXPECT_EQ(shapeClassDType("gemm f16 m32+ n64+ mem"), std::nullopt);
  EXPECT_EQ(shapeClassDType("gemm f32"), std::nullopt);
  EXPECT_EQ(shapeClassDType(""), std::nullopt);
  // Every word is one shapeClassOf writes: a class no case can fall in is not one.
  EXPECT_EQ(shapeClassDType("mlp bf16 m1-7 n1-15 l2"), DType::BF16);
  EXPECT_EQ(shapeClassDType("brgem bf16 m32+ n16-63 l1"), std::nullopt);
  EXPECT_EQ(shapeClassDType("brgemm bf16 M32+ n16-63 l1"), std::nullopt);
  EXPECT_EQ(shapeClassDType("brgemm bf16 m32+ n16-64 l1"), std::nullopt);
  EXPECT_EQ(shapeClassDType("brgemm bf16 m32+ n16-63 L1"), std::nullopt);
  EXPECT_EQ(shapeClassDType("brgemm bf16 m32+ n16-63 l1 extra"), std::nullopt);
  EXPECT_EQ(shapeClassDType("brgemm bf16  m32+ n16-63 l1"), std::nullopt);
  EXPECT_EQ(shapeClassDType("brgemm bf16 m32+ n16-63 l1 "), std::nullopt);
  const CacheSizes caches{48 * 1024, 1 << 20, 32 << 20};
  Problem p;
  p.dtype = DType::BF16;
  EXPECT_EQ(shapeClassDType(shapeClassOf(p, caches)), DType::BF16);
}

TEST(TunedSchedule, FitsItsClassOrSaysWhy) {
  const std::string f32 = "brgemm f32 m8-31 n16-63 l1";
  EXPECT_EQ(tunedScheduleProblem(Isa::Avx512, f32, "avx512.f32.12x32:prefetch=2", "t.json"), std::nullopt);
  EXPECT_EQ(tunedScheduleProblem(Isa::AmxEmulated, "brgemm bf16 m32+ n64+ l2", "amx.bf16.32x32", "t.json"),
            std::nullopt);
  EXPECT_EQ(tunedScheduleProblem(Isa::Avx512, f32, "avx512.f32.8x32:rows=tall", "t.json"),
            "tuned schedule avx512.f32.8x32:rows=tall (t.json, class brgemm f32 m8-31 n16-63 l1): the modifiers are "
            ":gemm=BMxBNxBK, :rows=short|balanced, :prefetch=D and :epilogue=separate, in that order");
  EXPECT_EQ(tunedScheduleProblem(Isa::Avx512Bf16, f32, "avx512bf16.bf16.8x32", "t.json"),
            "tuned schedule avx512bf16.bf16.8x32 (t.json, class brgemm f32 m8-31 n16-63 l1) is for bf16, not f32");
  EXPECT_EQ(tunedScheduleProblem(Isa::Avx2, f32, "avx512.f32.8x32", "t.json"),
            "tuned schedule avx512.f32.8x32 (t.json, class brgemm f32 m8-31 n16-63 l1) needs avx512, above --isa avx2");
  EXPECT_NE(tunedScheduleProblem(Isa::Avx512, f32, "avx512.f32.8x31", "t.json")->find("not whole vectors"),
            std::string::npos);
  EXPECT_EQ(tunedScheduleProblem(Isa::Avx512Bf16, "mlp bf16 m32+ n64+ mem", "avx512bf16.bf16.8x32:epilogue=separate",
                                 "t.json"),
            "tuned schedule avx512bf16.bf16.8x32:epilogue=separate (t.json, class mlp bf16 m32+ n64+ mem): "
            ":epilogue=separate compares the fused epilogue with separate passes and is not a tuning");
  EXPECT_NE(tunedScheduleProblem(Isa::Avx512, "mlp f32 m32+ n64+ mem", "avx512.f32.8x32:epilogue=separate", "t.json"),
            std::nullopt);
}

}  // namespace
}  // namespace nkbench::mlir_backend
