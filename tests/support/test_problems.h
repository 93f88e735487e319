// Problems for tests, in one line each.
#pragma once

#include <cstdint>
#include <ostream>

#include "harness/core/problem.h"

namespace nkbench::test {

inline Problem makeProblem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, bool accumulate,
                           OpKind kind = OpKind::Brgemm) {
  Problem p;
  p.kind = kind;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.accumulate = accumulate;
  return p;
}

}  // namespace nkbench::test

namespace nkbench {
// Parameterized tests print a problem as its description, not as raw bytes.
inline void PrintTo(const Problem& problem, std::ostream* out) { *out << problem.describe(); }
}  // namespace nkbench
