#include "harness/host/peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench {
namespace {

// Enough independent chains to cover FMA latency (4-5 cycles) times the FMA
// pipes (2 on current Intel and AMD cores): 10 in flight keep them busy; 12
// leaves room. AVX2 has 16 YMM registers, so 12 accumulators plus the two
// operands fit without spills; ZMM has 32 registers.
constexpr int kAccumulators = 12;
constexpr double kTrialSeconds = 0.05;
constexpr int kTrials = 5;

// acc = acc * multiplier + addend converges to a finite fixed point, so the
// values never overflow or turn denormal however long the loop runs.
constexpr float kMultiplier = 0.999999f;
constexpr float kAddend = 1e-6f;

template <std::size_t N>
float sumOf(const float (&lanes)[N]) {
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  return sum;
}

// Each function runs `iterations` rounds of kAccumulators independent FMAs
// and returns a value derived from all chains so none is optimised away.
// The target attributes keep the binary runnable on AVX2-only hosts.
__attribute__((target("avx2,fma"))) float runYmmFmaChains(std::int64_t iterations) {
  const __m256 multiplier = _mm256_set1_ps(kMultiplier);
  const __m256 addend = _mm256_set1_ps(kAddend);
  __m256 acc[kAccumulators];
#pragma GCC unroll 16
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_set1_ps(float(i));
  for (std::int64_t iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], multiplier, addend);
  }
  __m256 sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kAccumulators; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return sumOf(lanes);
}

__attribute__((target("avx512f"))) float runZmmFmaChains(std::int64_t iterations) {
  const __m512 multiplier = _mm512_set1_ps(kMultiplier);
  const __m512 addend = _mm512_set1_ps(kAddend);
  __m512 acc[kAccumulators];
#pragma GCC unroll 16
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(float(i));
  for (std::int64_t iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], multiplier, addend);
  }
  __m512 sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kAccumulators; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  return sumOf(lanes);
}

struct FmaKernel {
  float (*run)(std::int64_t iterations);
  int lanes;
};

volatile float g_sink;  // keeps the kernels' results, and so their work, alive

double secondsFor(const FmaKernel& kernel, std::int64_t iterations) {
  const auto start = std::chrono::steady_clock::now();
  g_sink = kernel.run(iterations);
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

// Iterations that take about kTrialSeconds: doubles a short run until it is
// long enough to time, then scales. The doubling also warms the core up.
std::int64_t calibrateIterations(const FmaKernel& kernel) {
  std::int64_t iterations = 1 << 12;
  double seconds = secondsFor(kernel, iterations);
  while (seconds < kTrialSeconds / 8) {
    iterations *= 2;
    seconds = secondsFor(kernel, iterations);
  }
  return std::max<std::int64_t>(1, std::int64_t(double(iterations) * kTrialSeconds / seconds));
}

}  // namespace

double measureFp32PeakGflops(Isa isa) {
  if (!detectCpuFeatures().has(isa))
    throw Error(fmt::format("peak {}: this host lacks {}", toString(isa), toString(isa)));
  const FmaKernel kernel = isa == Isa::Avx2 ? FmaKernel{runYmmFmaChains, 8}
                                            : FmaKernel{runZmmFmaChains, 16};
  const std::int64_t iterations = calibrateIterations(kernel);
  double best_seconds = secondsFor(kernel, iterations);
  for (int trial = 1; trial < kTrials; ++trial)
    best_seconds = std::min(best_seconds, secondsFor(kernel, iterations));
  const double flops = double(kAccumulators) * kernel.lanes * 2.0 * double(iterations);
  return flops / best_seconds * 1e-9;
}

}  // namespace nkbench
