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

std::optional<std::string> OperandSet::canaryDamage() const {
  for (const auto* buffer : {&a_f32, &b_f32, &bias})
    if (auto damage = buffer->canaryDamage()) return damage;
  for (const auto* buffer : {&a_bf16, &b_bf16})
    if (auto damage = buffer->canaryDamage()) return damage;
  return std::nullopt;
}

OperandSet makeOperandSet(const Problem& problem, const ProblemData& data, int index) {
  OperandSet set;
  set.index = index;
  const BufferName a{"A", index}, b{"B", index};
  if (problem.dtype == DType::BF16) {
    set.a_bf16 = GuardedBuffer<BFloat16>(data.a.size(), a);
    set.b_bf16 = GuardedBuffer<BFloat16>(data.b.size(), b);
    toBFloat16(data.a.data(), data.a.size(), set.a_bf16.data());
    toBFloat16(data.b.data(), data.b.size(), set.b_bf16.data());
  } else {
    set.a_f32 = GuardedBuffer<float>(std::span<const float>(data.a), a);
    set.b_f32 = GuardedBuffer<float>(std::span<const float>(data.b), b);
  }
  if (!data.bias.empty()) set.bias = GuardedBuffer<float>(std::span<const float>(data.bias), BufferName{"bias", index});
  return set;
}

std::vector<OperandSet> makeOperandSets(const Problem& problem, const ProblemData& data, std::int64_t count) {
  std::vector<OperandSet> sets;
  sets.reserve(std::size_t(count));
  for (std::int64_t set = 0; set < count; ++set) sets.push_back(makeOperandSet(problem, data, count > 1 ? int(set) : -1));
  return sets;
}

std::optional<std::string> outOfBoundsWrite(const OperandSet& inputs, const COperand& c) {
  if (auto damage = inputs.canaryDamage()) return damage;
  return c.canaryDamage();
}

std::int64_t operandBytes(const Problem& problem) {
  return (problem.aElements() + problem.bElements()) * elementBytes(problem.dtype) +
         problem.cElements() * elementBytes(problem.c_dtype) + problem.biasElements() * std::int64_t{sizeof(float)};
}

std::int64_t operandSetCount(const Problem& problem, CacheMode mode, std::int64_t rotation_bytes) {
  if (mode == CacheMode::Hot) return 1;
  const std::int64_t bytes = std::max<std::int64_t>(1, operandBytes(problem));
  return std::clamp((rotation_bytes + bytes - 1) / bytes, std::int64_t{2}, kMaxOperandSets);
}

}  // namespace nkbench
