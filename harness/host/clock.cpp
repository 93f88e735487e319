#include "harness/host/clock.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

namespace nkbench {
namespace {

constexpr std::int64_t kAddsPerIteration = 64;     // must match the .rept count below
constexpr std::int64_t kIterations = 1 << 19;      // 32 M cycles: ~10 ms at 3.5 GHz
constexpr int kTrials = 5;

// Runs kAddsPerIteration * iterations dependent adds: one cycle each, since
// every add waits for the previous one. The add takes a register operand, not
// an immediate, so no renamer can fold it away; the loop counter runs on
// another ALU in parallel.
std::uint64_t dependentAddChain(std::uint64_t iterations) {
  std::uint64_t accumulator = 0;
  const std::uint64_t increment = 1;
  asm volatile(
      "1:\n\t"
      ".rept 64\n\t"
      "add %[increment], %[accumulator]\n\t"
      ".endr\n\t"
      "dec %[iterations]\n\t"
      "jnz 1b\n\t"
      : [accumulator] "+r"(accumulator), [iterations] "+r"(iterations)
      : [increment] "r"(increment)
      : "cc");
  return accumulator;
}

double secondsFor(std::uint64_t iterations) {
  const auto start = std::chrono::steady_clock::now();
  dependentAddChain(iterations);
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

}  // namespace

double measureCoreClockGhz() {
  secondsFor(kIterations);  // lets the core ramp up to its boost clock
  double best_seconds = std::numeric_limits<double>::infinity();
  for (int trial = 0; trial < kTrials; ++trial)
    best_seconds = std::min(best_seconds, secondsFor(kIterations));
  const double cycles = double(kIterations) * double(kAddsPerIteration);
  return cycles / best_seconds * 1e-9;
}

}  // namespace nkbench
