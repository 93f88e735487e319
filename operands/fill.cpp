#include "operands/fill.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "operands/bf16.h"

namespace nkbench {
namespace {

// Exact fill: nonzero integers in [-8, 8] for A, B and the initial C. Every
// product is an integer of magnitude <= 64, so any partial sum of at most
// kMaxExactTerms products plus C_init stays below 2^24 and is exact in fp32,
// whatever the summation order. The values also fit bf16's 8-bit significand.
constexpr std::int64_t kExactMaxAbs = 8;
constexpr std::int64_t kExactMaxProduct = kExactMaxAbs * kExactMaxAbs;
constexpr std::int64_t kFp32ExactIntegerLimit = std::int64_t{1} << 24;
constexpr std::int64_t kMaxExactTerms = (kFp32ExactIntegerLimit - 1 - kExactMaxAbs) / kExactMaxProduct;

// Values depend only on (seed, operand, chunk, index in chunk), so a parallel
// fill split on chunk boundaries gives the same data for any thread count.
constexpr std::int64_t kFillChunk = std::int64_t{1} << 16;

enum class Operand : std::uint64_t { A = 1, B = 2, C = 3, Bias = 4 };

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t chunkKey(std::uint64_t seed, Operand operand, std::int64_t chunk) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(operand)) ^
                    static_cast<std::uint64_t>(chunk));
}

// Calls value(bits, index) for every index in [0, count), with bits a random
// 64-bit word that is a function of (seed, operand, index) only.
template <class ValueOf>
void fillChunked(FloatBuffer& out, std::int64_t count, std::uint64_t seed, Operand operand,
                 ValueOf&& value) {
  out.resize(static_cast<std::size_t>(count));
  for (std::int64_t chunk_begin = 0; chunk_begin < count; chunk_begin += kFillChunk) {
    const std::uint64_t key = chunkKey(seed, operand, chunk_begin / kFillChunk);
    const std::int64_t chunk_end = std::min(count, chunk_begin + kFillChunk);
    for (std::int64_t index = chunk_begin; index < chunk_end; ++index) {
      const std::uint64_t bits = splitmix64(key ^ static_cast<std::uint64_t>(index - chunk_begin));
      out[static_cast<std::size_t>(index)] = value(bits, index);
    }
  }
}

// A nonzero integer in [-8, -1] U [1, 8]: zero would hide the element it multiplies.
float exactValue(std::uint64_t bits) {
  const std::int64_t v = static_cast<std::int64_t>(bits >> 60) - kExactMaxAbs;  // [-8, 7]
  return static_cast<float>(v >= 0 ? v + 1 : v);
}

// Uniform in [-1, 1) on a 2^-23 grid, so the value is exact in fp32.
float randomValue(std::uint64_t bits) {
  const std::int64_t n = static_cast<std::int64_t>(bits >> 40);  // 24 bits
  return static_cast<float>(n - (std::int64_t{1} << 23)) * 0x1p-23f;
}

// Distance between nonzero A elements along the reduction (batch x K, read as
// one index r = b*K + k) so that no output sums more than kMaxExactTerms products.
std::int64_t exactSparsityStride(std::int64_t reduction_length) {
  if (reduction_length <= kMaxExactTerms) return 1;
  return (reduction_length + kMaxExactTerms - 1) / kMaxExactTerms;
}

ProblemData makeExactData(const Problem& p, std::uint64_t seed) {
  ProblemData data;
  const std::int64_t stride = exactSparsityStride(p.reductionLength());
  // Row i keeps the reduction indices r with (r + i) % stride == 0: at most
  // ceil(K*batch / stride) <= kMaxExactTerms per row, and each row a different phase.
  fillChunked(data.a, p.aElements(), seed, Operand::A, [&](std::uint64_t bits, std::int64_t index) {
    if (stride == 1) return exactValue(bits);
    const std::int64_t b = index / (p.m * p.k);
    const std::int64_t i = (index / p.k) % p.m;
    const std::int64_t k = index % p.k;
    return (b * p.k + k + i) % stride == 0 ? exactValue(bits) : 0.0f;
  });
  fillChunked(data.b, p.bElements(), seed, Operand::B,
              [](std::uint64_t bits, std::int64_t) { return exactValue(bits); });
  if (p.accumulate) {
    fillChunked(data.c_init, p.cElements(), seed, Operand::C,
                [](std::uint64_t bits, std::int64_t) { return exactValue(bits); });
  } else {
    data.c_init.assign(static_cast<std::size_t>(p.cElements()), 0.0f);
  }
  return data;
}

ProblemData makeRandomData(const Problem& p, std::uint64_t seed) {
  ProblemData data;
  const auto random = [](std::uint64_t bits, std::int64_t) { return randomValue(bits); };
  // bf16 operands (and a bf16 C): the values are rounded to bf16 here, so that the
  // reference sees exactly what the kernels see.
  const auto random_bf16 = [](std::uint64_t bits, std::int64_t) { return toFloat(toBFloat16(randomValue(bits))); };
  if (p.dtype == DType::BF16) {
    fillChunked(data.a, p.aElements(), seed, Operand::A, random_bf16);
    fillChunked(data.b, p.bElements(), seed, Operand::B, random_bf16);
  } else {
    fillChunked(data.a, p.aElements(), seed, Operand::A, random);
    fillChunked(data.b, p.bElements(), seed, Operand::B, random);
  }
  if (p.accumulate) {
    if (p.c_dtype == DType::BF16)
      fillChunked(data.c_init, p.cElements(), seed, Operand::C, random_bf16);
    else
      fillChunked(data.c_init, p.cElements(), seed, Operand::C, random);
  } else {
    data.c_init.assign(static_cast<std::size_t>(p.cElements()), 0.0f);
  }
  return data;
}

// A nonzero weight of an exact mlp: {-2, -1, 1, 2}.
float smallWeight(std::uint64_t bits) {
  const std::int64_t v = static_cast<std::int64_t>(bits >> 62) - 2;  // [-2, 1]
  return static_cast<float>(v >= 0 ? v + 1 : v);
}

constexpr std::int64_t kMlpMaxWeight = 2;

// The largest |output| of an exact mlp whose layers sum `terms` weights each.
std::int64_t exactMlpBound(const Problem& p, std::int64_t terms) {
  std::int64_t bound = kExactMaxAbs;
  for (std::int64_t layer = 0; layer < p.mlp.count(); ++layer) {
    // A bf16 layer reads the one before rounded to bf16, which may round up
    // by half a unit in the last place: at most 2^-8 of the value.
    if (layer > 0 && p.dtype == DType::BF16) bound += bound / 256 + 1;
    const std::int64_t t = std::min(terms, p.mlp.widths[std::size_t(layer)]);
    bound = t * kMlpMaxWeight * bound + kExactMaxAbs;
    if (bound >= kFp32ExactIntegerLimit) return kFp32ExactIntegerLimit;
  }
  return bound;
}

// Layer by layer, in one buffer: W_l at weightOffset(l), each of its C_{l-1} x C_l.
template <class WeightOf>
void fillMlpWeights(const Problem& p, std::uint64_t seed, FloatBuffer& weights, WeightOf&& weight) {
  std::vector<std::int64_t> ends;  // of each layer's weights
  for (std::int64_t layer = 1; layer <= p.mlp.count(); ++layer) ends.push_back(p.mlp.weightOffset(layer));
  fillChunked(weights, p.bElements(), seed, Operand::B, [&](std::uint64_t bits, std::int64_t index) {
    const auto layer = std::upper_bound(ends.begin(), ends.end(), index) - ends.begin();
    const std::int64_t in_layer = index - (layer == 0 ? 0 : ends[std::size_t(layer) - 1]);
    const std::int64_t columns = p.mlp.widths[std::size_t(layer) + 1];
    return weight(bits, layer, in_layer / columns, in_layer % columns);
  });
}

ProblemData makeMlpData(const Problem& p, FillMode mode, std::uint64_t seed) {
  ProblemData data;
  const bool bf16 = p.dtype == DType::BF16;
  const auto exact_in_type = [bf16](float value) { return bf16 ? toFloat(toBFloat16(value)) : value; };
  data.c_init.assign(static_cast<std::size_t>(p.cElements()), 0.0f);
  if (mode == FillMode::ExactInteger) {
    const std::int64_t terms = exactMlpTermsPerOutput(p);
    fillChunked(data.a, p.aElements(), seed, Operand::A, [](std::uint64_t bits, std::int64_t) { return exactValue(bits); });
    // Column j of a layer sums the rows r with (r + j) % stride == 0: at most `terms`.
    fillMlpWeights(p, seed, data.b, [&](std::uint64_t bits, std::int64_t layer, std::int64_t row, std::int64_t column) {
      const std::int64_t rows = p.mlp.widths[std::size_t(layer)];
      const std::int64_t stride = (rows + terms - 1) / terms;
      return (row + column) % stride == 0 ? smallWeight(bits) : 0.0f;
    });
    if (p.mlp.bias)
      fillChunked(data.bias, p.biasElements(), seed, Operand::Bias,
                  [](std::uint64_t bits, std::int64_t) { return exactValue(bits); });
    return data;
  }
  fillChunked(data.a, p.aElements(), seed, Operand::A,
              [&](std::uint64_t bits, std::int64_t) { return exact_in_type(randomValue(bits)); });
  fillMlpWeights(p, seed, data.b, [&](std::uint64_t bits, std::int64_t layer, std::int64_t, std::int64_t) {
    const double rows = double(p.mlp.widths[std::size_t(layer)]);
    return exact_in_type(std::ldexp(randomValue(bits), -int(std::lround(0.5 * std::log2(rows)))));
  });
  if (p.mlp.bias)
    fillChunked(data.bias, p.biasElements(), seed, Operand::Bias,
                [&](std::uint64_t bits, std::int64_t) { return exact_in_type(0.5f * randomValue(bits)); });
  return data;
}

}  // namespace

std::int64_t exactMlpTermsPerOutput(const Problem& problem) {
  std::int64_t widest = 1;
  for (std::int64_t width : problem.mlp.widths) widest = std::max(widest, width);
  std::int64_t terms = 1;
  while (terms < widest && exactMlpBound(problem, terms + 1) < kFp32ExactIntegerLimit) ++terms;
  return terms;
}

std::string_view toString(FillMode mode) {
  switch (mode) {
    case FillMode::ExactInteger: return "exact";
    case FillMode::Random: return "random";
  }
  return "?";
}

std::optional<FillMode> parseFillMode(std::string_view text) {
  if (text == "exact") return FillMode::ExactInteger;
  if (text == "random") return FillMode::Random;
  return std::nullopt;
}

ProblemData makeProblemData(const Problem& problem, FillMode mode, std::uint64_t seed) {
  if (problem.kind == OpKind::Mlp) return makeMlpData(problem, mode, seed);
  switch (mode) {
    case FillMode::ExactInteger: return makeExactData(problem, seed);
    case FillMode::Random: return makeRandomData(problem, seed);
  }
  return {};
}

}  // namespace nkbench
