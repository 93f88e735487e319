#include <gtest/gtest.h>

#include <vector>

#include "naive_gemm.h"
#include "reference/reference_gemm.h"

namespace nkbench {
namespace {

using test::makeProblem;

// batch 2 of 2x2 by 2x2, accumulating into C_init:
//   A0 = [1 2; 3 4]  B0 = [5 6; 7 8]   A0*B0 = [19 22; 43 50]
//   A1 = [1 0; 0 -1] B1 = [2 1; 1 -2]  A1*B1 = [2 1; -1 2]
//   C_init = [1 -1; 0 2]
TEST(ReferenceGemm, MatchesAHandComputedBrgemm) {
  const Problem p = makeProblem(2, 2, 2, 2, true);
  const FloatBuffer a = {1, 2, 3, 4, 1, 0, 0, -1};
  const FloatBuffer b = {5, 6, 7, 8, 2, 1, 1, -2};
  const FloatBuffer c_init = {1, -1, 0, 2};
  const ReferenceResult result = referenceGemm(p, a.data(), b.data(), c_init.data());
  EXPECT_EQ(result.value, (std::vector<double>{22, 22, 42, 54}));
  // |C_init| + |A0||B0| + |A1||B1|
  EXPECT_EQ(result.magnitude, (std::vector<double>{1 + 19 + 2, 1 + 22 + 1, 0 + 43 + 1, 2 + 50 + 2}));
}

TEST(ReferenceGemm, IgnoresCInitWithoutAccumulate) {
  const Problem p = makeProblem(1, 2, 3, 1, false);
  const FloatBuffer a = {1, -2, 3};
  const FloatBuffer b = {1, 2, 3, -4, 5, 6};  // 3x2
  const FloatBuffer garbage = {1e30f, -1e30f};
  const ReferenceResult result = referenceGemm(p, a.data(), b.data(), garbage.data());
  EXPECT_EQ(result.value, (std::vector<double>{1 - 6 + 15, 2 + 8 + 18}));
  EXPECT_EQ(result.magnitude, (std::vector<double>{1 + 6 + 15, 2 + 8 + 18}));
}

TEST(ReferenceGemm, AgreesWithPlainLoopsOnRectangularBatches) {
  const Problem p = makeProblem(7, 5, 3, 4, true);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  const ReferenceResult result = referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data());
  const FloatBuffer loops = test::naiveFp32Gemm(p, data, test::ReductionOrder::Forward);
  for (std::size_t index = 0; index < loops.size(); ++index)
    ASSERT_EQ(result.value[index], double(loops[index]));
}

}  // namespace
}  // namespace nkbench
