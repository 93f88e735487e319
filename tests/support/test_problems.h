// Problems for tests, in one line each.
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

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

// An mlp of `rows` rows through the layers `widths` describes (input width first),
// as the suite parser makes it: C in the problem's own dtype.
inline Problem makeMlpProblem(DType dtype, std::int64_t rows, std::vector<std::int64_t> widths, bool bias,
                              Activation activation) {
  Problem p;
  p.kind = OpKind::Mlp;
  p.dtype = dtype;
  p.c_dtype = dtype;
  p.m = rows;
  p.k = widths.front();
  p.n = widths.back();
  p.mlp = {std::move(widths), bias, activation};
  return p;
}

}  // namespace nkbench::test

namespace nkbench {
// Parameterized tests print a problem as its description, not as raw bytes.
inline void PrintTo(const Problem& problem, std::ostream* out) { *out << problem.describe(); }
}  // namespace nkbench
