// The A and B operands a case's kernels are bound to: one set for hot-cache
// timing, or for cold-cache timing enough independent copies that cycling
// through them (one call per set in turn) pushes each set out of the
// last-level cache before it comes round again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/memory/guarded_buffer.h"
#include "harness/core/problem.h"
#include "operands/bf16.h"
#include "operands/c_operand.h"
#include "operands/fill.h"

namespace nkbench {

enum class CacheMode { Hot, Cold };
std::string_view toString(CacheMode mode);
std::optional<CacheMode> parseCacheMode(std::string_view text);  // "hot" | "cold"

// A and B in the problem's type, owned, in guarded memory (guarded_buffer.h).
struct OperandSet {
  int index = -1;  // among the case's sets; -1 where it has just one
  GuardedBuffer<float> a_f32, b_f32;
  GuardedBuffer<BFloat16> a_bf16, b_bf16;
  GuardedBuffer<float> bias;  // an mlp's, f32 whatever its dtype
  const void* a() const;
  const void* b() const;
  const float* biasOrNull() const { return bias.empty() ? nullptr : bias.data(); }
  // The first of A's, B's and the biases' canary damage, as one line.
  std::optional<std::string> canaryDamage() const;
};

OperandSet makeOperandSet(const Problem& problem, const ProblemData& data, int index = -1);
// `count` sets, numbered in their buffers' names when there are several.
std::vector<OperandSet> makeOperandSets(const Problem& problem, const ProblemData& data, std::int64_t count);

// A kernel bound to `inputs` and `c` wrote outside them: the line for its row.
std::optional<std::string> outOfBoundsWrite(const OperandSet& inputs, const COperand& c);

// Bytes of A, B and C of one call.
std::int64_t operandBytes(const Problem& problem);

// Hot: 1. Cold: enough sets that together they span `rotation_bytes`, at least 2
// and at most kMaxOperandSets (the cap keeps tiny cases from preparing
// thousands of kernels; their sets then still span far more than L2).
inline constexpr std::int64_t kMaxOperandSets = 1024;
std::int64_t operandSetCount(const Problem& problem, CacheMode mode, std::int64_t rotation_bytes);

}  // namespace nkbench
