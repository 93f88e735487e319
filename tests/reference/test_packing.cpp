#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "harness/core/error.h"
#include "naive_gemm.h"
#include "operands/packing.h"

namespace nkbench {
namespace {

FloatBuffer iota(std::int64_t count) {
  FloatBuffer values(static_cast<std::size_t>(count));
  std::iota(values.begin(), values.end(), 1.0f);  // from 1: a padding zero stands out
  return values;
}

// (rows, cols, block rows, block cols): remainder shapes, exact fits and 1x1.
class PackingShapes
    : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> {};

// A and blocked C share the [outer][inner][rows][cols] tile order, so packing
// a matrix as A and unpacking it as C must give it back.
TEST_P(PackingShapes, PackThenUnpackRoundTrips) {
  const auto [rows, cols, block_rows, block_cols] = GetParam();
  const GemmBlocking blocking{block_rows, block_cols, block_cols};
  const FloatBuffer matrix = iota(rows * cols);
  FloatBuffer packed;
  packABlocked(matrix.data(), rows, cols, blocking, packed);
  EXPECT_EQ(std::int64_t(packed.size()),
            blockCount(rows, block_rows) * block_rows * blockCount(cols, block_cols) * block_cols);
  FloatBuffer unpacked(matrix.size(), -1.0f);
  unpackCBlocked(packed, rows, cols, blocking, unpacked.data());
  EXPECT_EQ(unpacked, matrix);
}

TEST_P(PackingShapes, APackPlacesEveryElementAndZeroPads) {
  const auto [m, k, bm, bk] = GetParam();
  const GemmBlocking blocking{bm, 64, bk};
  const FloatBuffer a = iota(m * k);
  FloatBuffer packed(7, 99.0f);  // stale contents must not survive
  packABlocked(a.data(), m, k, blocking, packed);
  const std::int64_t kb = blockCount(k, bk);
  for (std::int64_t i = 0; i < blockCount(m, bm) * bm; ++i)
    for (std::int64_t l = 0; l < kb * bk; ++l) {
      const float expected = i < m && l < k ? a[i * k + l] : 0.0f;
      ASSERT_EQ(packed[(((i / bm) * kb + l / bk) * bm + i % bm) * bk + l % bk], expected);
    }
}

TEST_P(PackingShapes, BPackPlacesEveryElementAndZeroPads) {
  const auto [k, n, bk, bn] = GetParam();
  const GemmBlocking blocking{64, bn, bk};
  const FloatBuffer b = iota(k * n);
  FloatBuffer packed;
  packBBlocked(b.data(), k, n, blocking, packed);
  const std::int64_t kb = blockCount(k, bk);
  for (std::int64_t l = 0; l < kb * bk; ++l)
    for (std::int64_t j = 0; j < blockCount(n, bn) * bn; ++j) {
      const float expected = l < k && j < n ? b[l * n + j] : 0.0f;
      ASSERT_EQ(packed[(((j / bn) * kb + l / bk) * bk + l % bk) * bn + j % bn], expected);
    }
}

// Exact edges: the last block row of A is stored at its own rows, each panel's
// tiles back to back, so that the edge kernel reads the panel as a dense batch
// [Kb][rows][bk]; and the last block column of B at its own columns,
// [Kb][bk][columns]. Blocked C round-trips through its edge blocks likewise.
TEST_P(PackingShapes, ExactEdgesStoreTheLastPanelsAtTheirOwnExtent) {
  const auto [rows, cols, block_rows, block_cols] = GetParam();
  const FloatBuffer matrix = iota(rows * cols);
  const std::int64_t row_blocks = blockCount(rows, block_rows), col_blocks = blockCount(cols, block_cols);
  // As A: rows are M, cols K (padded); as B: rows are K (padded), cols N.
  const GemmBlocking a_blocking{block_rows, 64, block_cols}, b_blocking{64, block_cols, block_rows};
  // Stale contents from an earlier pack must not survive in the stored tiles.
  const FloatBuffer stale(matrix.size(), 7.0f);
  FloatBuffer a_packed, b_packed;
  packABlocked(stale.data(), rows, cols, a_blocking, a_packed, BlockEdges::Exact);
  packBBlocked(stale.data(), rows, cols, b_blocking, b_packed, BlockEdges::Exact);
  packABlocked(matrix.data(), rows, cols, a_blocking, a_packed, BlockEdges::Exact);
  packBBlocked(matrix.data(), rows, cols, b_blocking, b_packed, BlockEdges::Exact);
  // Every stored element, K's padding included: the matrix's value, or zero.
  for (std::int64_t i = 0; i < row_blocks * block_rows; ++i)
    for (std::int64_t j = 0; j < col_blocks * block_cols; ++j) {
      const float expected = i < rows && j < cols ? matrix[std::size_t(i * cols + j)] : 0.0f;
      if (i < rows) {  // A: the edge panel's tiles are a_rows high, back to back
        const std::int64_t a_rows = std::min(block_rows, rows - i / block_rows * block_rows);
        const std::int64_t a_index = (i / block_rows) * col_blocks * block_rows * block_cols +
                                     (j / block_cols) * a_rows * block_cols + (i % block_rows) * block_cols +
                                     j % block_cols;
        ASSERT_EQ(a_packed[std::size_t(a_index)], expected) << "A " << i << "," << j;
      }
      if (j < cols) {  // B: the edge panel's tiles are b_cols wide, back to back
        const std::int64_t b_cols = std::min(block_cols, cols - j / block_cols * block_cols);
        const std::int64_t b_index = (j / block_cols) * row_blocks * block_rows * block_cols +
                                     (i / block_rows) * block_rows * b_cols + (i % block_rows) * b_cols +
                                     j % block_cols;
        ASSERT_EQ(b_packed[std::size_t(b_index)], expected) << "B " << i << "," << j;
      }
    }
  const GemmBlocking blocking{block_rows, block_cols, 64};
  FloatBuffer c_blocked(std::size_t(row_blocks * col_blocks * block_rows * block_cols), 0.0f);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t c_cols = std::min(block_cols, cols - j / block_cols * block_cols);
      c_blocked[std::size_t(((i / block_rows) * col_blocks + j / block_cols) * block_rows * block_cols +
                            (i % block_rows) * c_cols + j % block_cols)] = matrix[std::size_t(i * cols + j)];
    }
  FloatBuffer unpacked(matrix.size(), -1.0f);
  unpackCBlocked(c_blocked, rows, cols, blocking, unpacked.data(), BlockEdges::Exact);
  EXPECT_EQ(unpacked, matrix);
}

INSTANTIATE_TEST_SUITE_P(Remainders, PackingShapes,
                         ::testing::Values(std::make_tuple(7, 33, 32, 32), std::make_tuple(1, 1, 32, 64),
                                           std::make_tuple(65, 129, 64, 64), std::make_tuple(65, 129, 32, 64),
                                           std::make_tuple(64, 64, 32, 32), std::make_tuple(7, 33, 64, 32)));

// The layouts compose into a GEMM: C block (i, j) = sum over l of A(i, l) * B(j, l).
TEST(Packing, BlockedGemmMatchesTheReference) {
  const Problem p = test::makeProblem(65, 33, 70, 1, false);
  const GemmBlocking blocking{32, 16, 32};
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  FloatBuffer packed_a, packed_b;
  packABlocked(data.a.data(), p.m, p.k, blocking, packed_a);
  packBBlocked(data.b.data(), p.k, p.n, blocking, packed_b);
  const std::int64_t mb = blockCount(p.m, blocking.bm), nb = blockCount(p.n, blocking.bn);
  const std::int64_t kb = blockCount(p.k, blocking.bk);
  const auto [bm, bn, bk] = blocking;
  FloatBuffer blocked_c(static_cast<std::size_t>(mb * nb * bm * bn), 0.0f);
  for (std::int64_t i = 0; i < mb; ++i)
    for (std::int64_t j = 0; j < nb; ++j)
      for (std::int64_t l = 0; l < kb; ++l) {
        const float* a_tile = packed_a.data() + (i * kb + l) * bm * bk;
        const float* b_tile = packed_b.data() + (j * kb + l) * bk * bn;
        float* c_tile = blocked_c.data() + (i * nb + j) * bm * bn;
        for (std::int64_t r = 0; r < bm; ++r)
          for (std::int64_t s = 0; s < bk; ++s)
            for (std::int64_t c = 0; c < bn; ++c) c_tile[r * bn + c] += a_tile[r * bk + s] * b_tile[s * bn + c];
      }
  FloatBuffer c(static_cast<std::size_t>(p.cElements()));
  unpackCBlocked(blocked_c, p.m, p.n, blocking, c.data());
  EXPECT_EQ(c, test::naiveFp32Gemm(p, data, test::ReductionOrder::Forward));
}

TEST(Packing, RejectsNonPositiveBlocks) {
  FloatBuffer packed;
  const float value = 1.0f;
  EXPECT_THROW(packABlocked(&value, 1, 1, GemmBlocking{0, 64, 64}, packed), Error);
  EXPECT_THROW(packBBlocked(&value, 1, 1, GemmBlocking{64, 64, -1}, packed), Error);
}

TEST(Packing, UnpackRejectsAWronglySizedBuffer) {
  FloatBuffer c(4);
  EXPECT_THROW(unpackCBlocked(FloatBuffer(3), 2, 2, GemmBlocking{2, 2, 2}, c.data()), Error);
}

}  // namespace
}  // namespace nkbench
