// oneDNN's implementation names -> the nkbench level reported as isa_used.
#include <gtest/gtest.h>

#include "kernels/onednn/onednn_isa_level.h"

namespace nkbench::onednn {
namespace {

TEST(OnednnIsaUsed, BrgemmNamesTheirLevel) {
  EXPECT_EQ(isaUsed("brg:avx512_core_amx", Isa::Amx), "amx");
  EXPECT_EQ(isaUsed("brg:avx512_core_bf16", Isa::Amx), "avx512-bf16");
  EXPECT_EQ(isaUsed("brg:avx512_core", Isa::Avx512Bf16), "avx512");
  EXPECT_EQ(isaUsed("brg:avx512_core_vnni", Isa::Avx512Bf16), "avx512");  // int8 VNNI, no bf16
  EXPECT_EQ(isaUsed("jit:avx2", Isa::Avx512), "avx2");
  EXPECT_EQ(isaUsed("brg:avx2_vnni", Isa::Avx512), "avx2");
}

TEST(OnednnIsaUsed, TheNameWinsOverTheCap) {
  // Under the amx cap oneDNN may still pick AVX-512 code (e.g. for f32).
  EXPECT_EQ(isaUsed("brg:avx512_core x batch (sum post-op)", Isa::Amx), "avx512");
}

TEST(OnednnIsaUsed, TheHighestOfSeveralNames) {
  EXPECT_EQ(isaUsed("brg:avx512_core_amx then brg:avx512_core_bf16 x (batch-1) (sum post-op)", Isa::Amx),
            "amx");
}

TEST(OnednnIsaUsed, GemmJitTakesTheMaxIsaItWasGiven) {
  EXPECT_EQ(isaUsed("gemm:jit (max isa avx512_core_bf16)", Isa::Amx), "avx512-bf16");
  EXPECT_EQ(isaUsed("gemm:jit", Isa::Avx512), "avx512");
  EXPECT_EQ(isaUsed("gemm:jit", Isa::Avx2), "avx2");
}

TEST(OnednnIsaUsed, LevelsBelowAvx2HaveNoName) {
  EXPECT_EQ(isaUsed("jit:sse41", Isa::Avx2), "");
  EXPECT_EQ(isaUsed("gemm:jit (max isa avx)", Isa::Avx2), "");
}

}  // namespace
}  // namespace nkbench::onednn
