#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "harness/run/operand_sets.h"
#include "operands/c_operand.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

TEST(OperandSets, HotUsesOneSet) {
  EXPECT_EQ(operandSetCount(test::makeProblem(32, 32, 32, 8, false), CacheMode::Hot, 1 << 30), 1);
}

TEST(OperandSets, ColdSetsSpanTheRotationBytes) {
  const Problem p = test::makeProblem(64, 64, 64, 4, false);  // A, B 64 KiB each, C 16 KiB
  EXPECT_EQ(operandBytes(p), 2 * 4 * 64 * 64 * 4 + 64 * 64 * 4);
  const std::int64_t rotation = 10 * operandBytes(p) + 1;
  EXPECT_EQ(operandSetCount(p, CacheMode::Cold, rotation), 11);
}

TEST(OperandSets, ColdKeepsBetweenTwoAndTheCap) {
  const Problem big = test::makeProblem(1024, 1024, 1024, 1, false);
  EXPECT_EQ(operandSetCount(big, CacheMode::Cold, 1024), 2);
  const Problem tiny = test::makeProblem(1, 1, 1, 1, false);
  EXPECT_EQ(operandSetCount(tiny, CacheMode::Cold, std::int64_t{1} << 40), kMaxOperandSets);
}

TEST(OperandSets, Bf16OperandsCountTwoBytes) {
  Problem p = test::makeProblem(8, 32, 16, 2, false);
  p.dtype = DType::BF16;
  EXPECT_EQ(operandBytes(p), (8 * 16 * 2 + 16 * 32 * 2) * 2 + 8 * 32 * 4);
  p.c_dtype = DType::BF16;
  EXPECT_EQ(operandBytes(p), (8 * 16 * 2 + 16 * 32 * 2) * 2 + 8 * 32 * 2);
}

TEST(OperandSets, SetsAreIndependentCopiesInTheProblemsType) {
  Problem p = test::makeProblem(4, 8, 6, 2, false);
  p.dtype = DType::BF16;
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  const OperandSet first = makeOperandSet(p, data), second = makeOperandSet(p, data);
  EXPECT_NE(first.a(), second.a());
  EXPECT_NE(first.b(), second.b());
  ASSERT_EQ(first.a_bf16.size(), data.a.size());
  for (std::size_t i = 0; i < data.a.size(); ++i) EXPECT_EQ(toFloat(first.a_bf16[i]), data.a[i]);
  EXPECT_TRUE(first.a_f32.empty());
}

TEST(OperandSets, SeveralSetsNameTheirBuffersBySet) {
  const Problem p = test::makeProblem(4, 8, 6, 2, false);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  const std::vector<OperandSet> sets = makeOperandSets(p, data, 3);
  ASSERT_EQ(sets.size(), 3u);
  for (int set = 0; set < 3; ++set) {
    const OperandSet& inputs = sets[std::size_t(set)];
    EXPECT_EQ(inputs.index, set);
    EXPECT_STREQ(inputs.a_f32.name().operand, "A");
    EXPECT_EQ(inputs.a_f32.name().operand_set, set);
    EXPECT_STREQ(inputs.b_f32.name().operand, "B");
    EXPECT_EQ(inputs.b_f32.name().operand_set, set);
    EXPECT_EQ(std::vector<float>(inputs.b_f32.begin(), inputs.b_f32.end()),
              std::vector<float>(data.b.begin(), data.b.end()));
  }
  const std::vector<OperandSet> one = makeOperandSets(p, data, 1);
  EXPECT_EQ(one.at(0).index, -1);
  EXPECT_EQ(one.at(0).a_f32.name().operand_set, -1);
}

TEST(OperandSets, COperandIsGuardedAndNamed) {
  Problem p = test::makeProblem(3, 5, 4, 1, false);
  p.c_dtype = DType::BF16;
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  COperand c(p, data, 6);
  GuardHit hit;
  ASSERT_TRUE(findGuardHit(static_cast<std::byte*>(c.data()) + 3 * 5 * sizeof(BFloat16), &hit));
  EXPECT_EQ(describeGuardHit(hit), "out of bounds: 1 byte past the end of C of operand set 6");
}

TEST(OperandSets, AnUntouchedSetAndCShowNoOutOfBoundsWrite) {
  const Problem p = test::makeProblem(3, 5, 4, 2, true);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  const OperandSet inputs = makeOperandSet(p, data);
  COperand c(p, data);
  std::fill_n(static_cast<float*>(c.data()), p.cElements(), 1.0f);  // every element of C written
  EXPECT_EQ(outOfBoundsWrite(inputs, c), std::nullopt);
}

TEST(OperandSets, AWriteIntoTheSlackOfAnyOperandIsReported) {
  Problem p = test::makeProblem(3, 5, 4, 2, false);  // A 96 bytes, B 160, C 120: none a multiple of 64
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  {
    OperandSet inputs = makeOperandSet(p, data, 1);
    COperand c(p, data, 1);
    reinterpret_cast<std::byte*>(inputs.b_f32.data() + inputs.b_f32.size())[2] = std::byte{0};
    EXPECT_EQ(outOfBoundsWrite(inputs, c), "out of bounds: a write 3 bytes past the end of B of operand set 1");
  }
  {
    OperandSet inputs = makeOperandSet(p, data);
    COperand c(p, data);
    static_cast<float*>(c.data())[p.cElements()] = 0.0f;
    EXPECT_EQ(outOfBoundsWrite(inputs, c), "out of bounds: a write 4 bytes past the end of C");
  }
  p.dtype = DType::BF16;
  {
    OperandSet inputs = makeOperandSet(p, data);
    COperand c(p, data);
    inputs.a_bf16.data()[-1] = BFloat16{0};
    EXPECT_EQ(outOfBoundsWrite(inputs, c), "out of bounds: a write 2 bytes before the start of A");
  }
}

TEST(OperandSets, CacheModeNames) {
  EXPECT_EQ(parseCacheMode("cold"), CacheMode::Cold);
  EXPECT_EQ(parseCacheMode("hot"), CacheMode::Hot);
  EXPECT_FALSE(parseCacheMode("warm").has_value());
}

}  // namespace
}  // namespace nkbench
