#include "harness/host/peak.h"

#include <barrier>
#include <string>
#include <thread>

#include <immintrin.h>

#include <algorithm>
#include <iterator>
#include <chrono>
#include <cstdint>
#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/host/pinning.h"

namespace nkbench {
namespace {

// Enough independent chains to cover FMA latency (4-5 cycles) times the FMA
// pipes (2 on current Intel and AMD cores): 10 in flight keep them busy; 12
// leaves room. AVX2 has 16 YMM registers, so 12 accumulators plus the two
// operands fit without spills; ZMM has 32 registers.
constexpr int kAccumulators = 12;
// vdpbf16ps has a longer latency (about 6 cycles) than an FMA, so 2 pipes
// need 12 in flight; 16 leaves room and, with the two operands, still fits in
// the 32 ZMM registers.
constexpr int kBf16Accumulators = 16;
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

// Each bf16 pair product is 2^-20, so an accumulator grows by at most 2^-19 a
// round until that is below half its ulp (before 64): it then stays put,
// finite and normal, however long the loop runs.
__attribute__((target("avx512f,avx512bf16"))) float runZmmBf16DotChains(std::int64_t iterations) {
  const __m512 operand_fp32 = _mm512_set1_ps(1.0f / 1024.0f);  // exact in bf16
  const __m512bh a = _mm512_cvtne2ps_pbh(operand_fp32, operand_fp32);
  const __m512bh b = _mm512_cvtne2ps_pbh(operand_fp32, operand_fp32);
  __m512 acc[kBf16Accumulators];
#pragma GCC unroll 16
  for (int i = 0; i < kBf16Accumulators; ++i) acc[i] = _mm512_set1_ps(float(i));
  for (std::int64_t iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 16
    for (int i = 0; i < kBf16Accumulators; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  __m512 sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kBf16Accumulators; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  return sumOf(lanes);
}

// AMX: 4 independent 16x16 f32 accumulator tiles (tdpbf16ps has a latency of
// several times its issue interval), fed by two A and two B tiles loaded once.
constexpr int kTileAccumulators = 4;
constexpr double kFlopsPerTileProduct = 16.0 * 16 * 32 * 2;  // 16x16 C, 32 K, multiply and add

// The 64-byte tile configuration of palette 1: bytes per row and rows of each tmm register.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// Tile registers are named in the instructions, so the four products are spelled out.
__attribute__((target("amx-tile,amx-bf16"))) float runTileDotChains(std::int64_t iterations) {
  TileConfig config;
  for (int tile = 0; tile < 8; ++tile) {
    config.bytes_per_row[tile] = 64;
    config.rows[tile] = 16;
  }
  // bf16 2^-10 everywhere: the sums stay far from overflow and never turn denormal.
  alignas(64) std::uint16_t operand[16 * 32];
  std::fill(std::begin(operand), std::end(operand), std::uint16_t{0x3a80});
  alignas(64) float c[16 * 16];
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (std::int64_t i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0];
}

// A chain kernel and the FLOPs one of its rounds performs over all its chains.
struct ChainKernel {
  float (*run)(std::int64_t iterations);
  double flops_per_iteration;
};

volatile float g_sink;  // keeps the kernels' results, and so their work, alive

double secondsFor(const ChainKernel& kernel, std::int64_t iterations) {
  const auto start = std::chrono::steady_clock::now();
  g_sink = kernel.run(iterations);
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

// Iterations that take about kTrialSeconds: doubles a short run until it is
// long enough to time, then scales. The doubling also warms the core up.
std::int64_t calibrateIterations(const ChainKernel& kernel) {
  std::int64_t iterations = 1 << 12;
  double seconds = secondsFor(kernel, iterations);
  while (seconds < kTrialSeconds / 8) {
    iterations *= 2;
    seconds = secondsFor(kernel, iterations);
  }
  return std::max<std::int64_t>(1, std::int64_t(double(iterations) * kTrialSeconds / seconds));
}

// Best of kTrials runs of about kTrialSeconds each, in GFLOPS.
double bestGflops(const ChainKernel& kernel) {
  const std::int64_t iterations = calibrateIterations(kernel);
  double best_seconds = secondsFor(kernel, iterations);
  for (int trial = 1; trial < kTrials; ++trial)
    best_seconds = std::min(best_seconds, secondsFor(kernel, iterations));
  return kernel.flops_per_iteration * double(iterations) / best_seconds * 1e-9;
}

void requireIsa(Isa isa) {
  if (!detectCpuFeatures().has(isa))
    throw Error(fmt::format("peak {}: this host lacks {}", toString(isa), toString(isa)));
}

}  // namespace

double measureFp32PeakGflops(Isa isa) {
  requireIsa(isa);
  // Each FMA is 2 FLOPs per lane.
  return isa == Isa::Avx2 ? bestGflops({runYmmFmaChains, kAccumulators * 8 * 2.0})
                          : bestGflops({runZmmFmaChains, kAccumulators * 16 * 2.0});
}

double measureBf16DotPeakGflops() {
  requireIsa(Isa::Avx512Bf16);
  // Per lane, vdpbf16ps multiplies 2 bf16 pairs and adds both products.
  return bestGflops({runZmmBf16DotChains, kBf16Accumulators * 16 * 2 * 2.0});
}

double measureAmxBf16PeakGflops() {
  // Checked first: without the CPU feature and the OS permission, the tile instructions fault.
  requireIsa(Isa::Amx);
  return bestGflops({runTileDotChains, kTileAccumulators * kFlopsPerTileProduct});
}

namespace {

// `measure` on every core of `cores` at once, one pinned thread each, summed.
template <class Measure>
double onEveryCore(const std::vector<int>& cores, Measure&& measure) {
  if (cores.size() <= 1) return measure();
  std::vector<double> results(cores.size(), 0.0);
  std::vector<std::string> errors(cores.size());
  std::barrier start(std::ptrdiff_t(cores.size()));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cores.size(); ++i)
    threads.emplace_back([&, i] {
      std::string pin_error;
      if (!pinCurrentThreadToCpu(cores[i], &pin_error)) errors[i] = pin_error;
      start.arrive_and_wait();
      try {
        if (errors[i].empty()) results[i] = measure();
      } catch (const Error& error) {
        errors[i] = error.what();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors)
    if (!error.empty()) throw Error("peak: " + error);
  double sum = 0.0;
  for (double result : results) sum += result;
  return sum;
}

}  // namespace

double measureFp32PeakGflops(Isa isa, const std::vector<int>& cores) {
  return onEveryCore(cores, [isa] { return measureFp32PeakGflops(isa); });
}

double measureBf16DotPeakGflops(const std::vector<int>& cores) {
  return onEveryCore(cores, [] { return measureBf16DotPeakGflops(); });
}

double measureAmxBf16PeakGflops(const std::vector<int>& cores) {
  return onEveryCore(cores, [] { return measureAmxBf16PeakGflops(); });
}

Bf16Peak bf16PeakFor(Isa run_isa, bool any_bf16_case) {
  if (!any_bf16_case || run_isa < Isa::Avx512Bf16) return Bf16Peak::None;
  return run_isa == Isa::Amx ? Bf16Peak::Tiles : Bf16Peak::DotProduct;
}

Bf16RoutePeaks measureBf16RoutePeaks(Isa run_isa, bool any_bf16_case) {
  if (!any_bf16_case || run_isa < Isa::Avx512Bf16) return {};
  return {measureFp32PeakGflops(Isa::Avx512), measureBf16DotPeakGflops()};
}

}  // namespace nkbench
