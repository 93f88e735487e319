#include "harness/run/operand_sets.h"

#include <algorithm>

namespace nkbench {

std::string_view toString(CacheMode mode) { return mode == CacheMode::Cold ? "cold" : "hot"; }

std::optional<CacheMode> parseCacheMode(std::string_view text) {
  if (text == "hot") return CacheMode::Hot;
  if (text == "cold") return CacheMode::Cold;
  return std::nullopt;
}

const void* OperandSet::a() const { return a_bf16.empty() ? static_cast<const void*>(a_f32.data()) : a_bf16.data(); }
const void* OperandSet::b() const { return b_bf16.empty() ? static_cast<const void*>(b_f32.data()) : b_bf16.data(); }

OperandSet makeOperandSet(const Problem& problem, const ProblemData& data) {
  OperandSet set;
  if (problem.dtype == DType::BF16) {
    set.a_bf16.resize(data.a.size());
    set.b_bf16.resize(data.b.size());
    toBFloat16(data.a.data(), data.a.size(), set.a_bf16.data());
    toBFloat16(data.b.data(), data.b.size(), set.b_bf16.data());
  } else {
    set.a_f32 = data.a;
    set.b_f32 = data.b;
  }
  return set;
}

std::int64_t operandBytes(const Problem& problem) {
  return (problem.aElements() + problem.bElements()) * elementBytes(problem.dtype) +
         problem.cElements() * elementBytes(problem.c_dtype);
}

std::int64_t operandSetCount(const Problem& problem, CacheMode mode, std::int64_t rotation_bytes) {
  if (mode == CacheMode::Hot) return 1;
  const std::int64_t bytes = std::max<std::int64_t>(1, operandBytes(problem));
  return std::clamp((rotation_bytes + bytes - 1) / bytes, std::int64_t{2}, kMaxOperandSets);
}

}  // namespace nkbench
