#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/core/error.h"
#include "operands/vnni_packing.h"

namespace nkbench {
namespace {

// Distinct non-zero elements 1, 2, 3, ...: each one is traceable and a padding
// zero stands out. For bf16 these are distinct bit patterns, compared bitwise.
template <class T>
VnniBuffer<T> distinctValues(std::int64_t count) {
  VnniBuffer<T> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<T, BFloat16>)
      values[i] = BFloat16{static_cast<std::uint16_t>(i + 1)};
    else
      values[i] = static_cast<float>(i + 1);
  }
  return values;
}

// Packed buffers start with stale contents that a pack must overwrite.
template <class T>
VnniBuffer<T> staleBuffer() {
  return distinctValues<T>(5);
}

template <class T>
VnniBuffer<T> fromFloats(const std::vector<float>& values) {
  VnniBuffer<T> converted(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, BFloat16>)
      converted[i] = toBFloat16(values[i]);
    else
      converted[i] = values[i];
  }
  return converted;
}

// (K, N): odd and even K, N = 1, K = 1.
const std::vector<std::pair<std::int64_t, std::int64_t>> kShapes = {
    {1, 1}, {2, 1}, {3, 1}, {1, 5}, {4, 16}, {5, 17}, {7, 3}, {0, 4}};

template <class T>
class VnniPacking : public ::testing::Test {};
using ElementTypes = ::testing::Types<BFloat16, float>;
TYPED_TEST_SUITE(VnniPacking, ElementTypes);

TYPED_TEST(VnniPacking, PairsOfRowsInterleaveAndOddKGetsAZeroRow) {
  // B = [[1, 2], [3, 4], [5, 6]] -> [[1, 3], [2, 4]], [[5, 0], [6, 0]]
  const auto b = fromFloats<TypeParam>({1, 2, 3, 4, 5, 6});
  VnniBuffer<TypeParam> packed = staleBuffer<TypeParam>();
  packBVnni(b.data(), 3, 2, packed);
  EXPECT_EQ(packed, fromFloats<TypeParam>({1, 3, 2, 4, 5, 0, 6, 0}));
}

TYPED_TEST(VnniPacking, PackPlacesEveryElementAtItsPairIndex) {
  for (const auto& [k, n] : kShapes) {
    SCOPED_TRACE(::testing::Message() << "K=" << k << " N=" << n);
    const auto b = distinctValues<TypeParam>(k * n);
    VnniBuffer<TypeParam> packed = staleBuffer<TypeParam>();
    packBVnni(b.data(), k, n, packed);
    const std::int64_t padded_k = (k + 1) / 2 * 2;
    ASSERT_EQ(std::int64_t(packed.size()), padded_k * n);
    EXPECT_EQ(vnniPaddedK(k), padded_k);
    for (std::int64_t row = 0; row < padded_k; ++row)
      for (std::int64_t col = 0; col < n; ++col) {
        const TypeParam expected = row < k ? b[row * n + col] : TypeParam{};
        ASSERT_EQ(packed[((row / 2) * n + col) * 2 + row % 2], expected) << row << "," << col;
      }
  }
}

TYPED_TEST(VnniPacking, UnpackInvertsPack) {
  for (const auto& [k, n] : kShapes) {
    SCOPED_TRACE(::testing::Message() << "K=" << k << " N=" << n);
    const auto b = distinctValues<TypeParam>(k * n);
    VnniBuffer<TypeParam> packed;
    packBVnni(b.data(), k, n, packed);
    const TypeParam sentinel = distinctValues<TypeParam>(k * n + 1).back();
    VnniBuffer<TypeParam> unpacked(static_cast<std::size_t>(k * n + 1), sentinel);  // one past the end
    unpackBVnni(packed, k, n, unpacked.data());
    EXPECT_EQ(unpacked.back(), sentinel) << "wrote past K x N";
    unpacked.pop_back();
    EXPECT_EQ(unpacked, b);
  }
}

TYPED_TEST(VnniPacking, BatchedPackIsEachMatrixPackedInTurn) {
  const std::int64_t batch = 3, k = 5, n = 3;
  const auto b = distinctValues<TypeParam>(batch * k * n);
  VnniBuffer<TypeParam> packed = staleBuffer<TypeParam>();
  packBVnniBatched(b.data(), batch, k, n, packed);
  const std::int64_t pairs = vnniPairCount(k);
  ASSERT_EQ(std::int64_t(packed.size()), batch * pairs * n * 2);
  for (std::int64_t i = 0; i < batch; ++i) {
    VnniBuffer<TypeParam> single;
    packBVnni(b.data() + i * k * n, k, n, single);
    const auto begin = packed.begin() + i * pairs * n * 2;
    EXPECT_TRUE(std::equal(single.begin(), single.end(), begin)) << "batch " << i;
  }
  // [batch][k / 2][n][k % 2], spot checks including the pad row of the last batch.
  EXPECT_EQ(packed[((1 * pairs + 1) * n + 2) * 2 + 1], b[(1 * k + 3) * n + 2]);
  EXPECT_EQ(packed[((2 * pairs + 2) * n + 1) * 2 + 1], TypeParam{});
  VnniBuffer<TypeParam> unpacked(b.size());
  unpackBVnniBatched(packed, batch, k, n, unpacked.data());
  EXPECT_EQ(unpacked, b);
}

// (K, N, bk, bn): remainders in both dimensions, exact fits, 1x1, one block.
const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> kBlockedShapes = {
    {7, 33, 4, 16}, {1, 1, 2, 2}, {64, 32, 16, 16}, {65, 129, 32, 64}, {5, 3, 8, 4}, {6, 1, 2, 1}};

TYPED_TEST(VnniPacking, BlockedPackPlacesEveryElementAndZeroPads) {
  for (const auto& [k, n, bk, bn] : kBlockedShapes) {
    SCOPED_TRACE(::testing::Message() << "K=" << k << " N=" << n << " bk=" << bk << " bn=" << bn);
    const GemmBlocking blocking{64, bn, bk};
    const auto b = distinctValues<TypeParam>(k * n);
    VnniBuffer<TypeParam> packed = staleBuffer<TypeParam>();
    packBBlockedVnni(b.data(), k, n, blocking, packed);
    const std::int64_t kb = blockCount(k, bk), nb = blockCount(n, bn);
    ASSERT_EQ(std::int64_t(packed.size()), nb * kb * bk * bn);
    for (std::int64_t row = 0; row < kb * bk; ++row)
      for (std::int64_t col = 0; col < nb * bn; ++col) {
        const TypeParam expected = row < k && col < n ? b[row * n + col] : TypeParam{};
        const std::int64_t r = row % bk, c = col % bn;
        // [Nb][Kb][bk / 2][bn][2]
        const std::int64_t index = (((col / bn) * kb + row / bk) * (bk / 2) + r / 2) * bn * 2 + c * 2 + r % 2;
        ASSERT_EQ(packed[index], expected) << row << "," << col;
      }
    VnniBuffer<TypeParam> unpacked(b.size());
    unpackBBlockedVnni(packed, k, n, blocking, unpacked.data());
    EXPECT_EQ(unpacked, b);
  }
}

// Exact edges: the last block column's tiles hold its columns rounded up to
// the multiple (whole vectors), zero past N, each tile [bk/2][columns][2] and
// the panel's tiles back to back.
TYPED_TEST(VnniPacking, BlockedPackStoresTheEdgeColumnsAtTheirOwnWidth) {
  for (const auto& [k, n, bk, bn] : kBlockedShapes) {
    for (const std::int64_t multiple : {std::int64_t{1}, std::int64_t{4}}) {
      if (bn % multiple != 0) continue;  // refused: below
      SCOPED_TRACE(::testing::Message() << "K=" << k << " N=" << n << " bk=" << bk << " bn=" << bn << " x" << multiple);
      const GemmBlocking blocking{64, bn, bk};
      const auto b = distinctValues<TypeParam>(k * n);
      VnniBuffer<TypeParam> packed = staleBuffer<TypeParam>();
      packBBlockedVnni(b.data(), k, n, blocking, packed, BlockEdges::Exact, multiple);
      const std::int64_t kb = blockCount(k, bk), nb = blockCount(n, bn);
      for (std::int64_t row = 0; row < kb * bk; ++row)
        for (std::int64_t col = 0; col < nb * bn; ++col) {
          const std::int64_t panel = col / bn, c = col % bn, r = row % bk;
          const std::int64_t columns = blockCount(std::min(bn, n - panel * bn), multiple) * multiple;
          if (c >= columns) continue;  // past the stored edge
          const TypeParam expected = row < k && col < n ? b[row * n + col] : TypeParam{};
          const std::int64_t index =
              panel * kb * bk * bn + (row / bk) * bk * columns + ((r / 2) * columns + c) * 2 + r % 2;
          ASSERT_EQ(packed[index], expected) << row << "," << col;
        }
      VnniBuffer<TypeParam> unpacked(b.size());
      unpackBBlockedVnni(packed, k, n, blocking, unpacked.data(), BlockEdges::Exact, multiple);
      EXPECT_EQ(unpacked, b);
    }
  }
  // An edge rounded up past the whole block's columns is refused.
  const auto b = distinctValues<TypeParam>(6 * 6);
  VnniBuffer<TypeParam> packed;
  EXPECT_THROW(packBBlockedVnni(b.data(), 6, 6, GemmBlocking{64, 6, 2}, packed, BlockEdges::Exact, 4), Error);
}

TYPED_TEST(VnniPacking, APaddingAddsAZeroColumnOnlyForOddK) {
  for (const auto& [m, k] : kShapes) {
    SCOPED_TRACE(::testing::Message() << "M=" << m << " K=" << k);
    const auto a = distinctValues<TypeParam>(m * k);
    VnniBuffer<TypeParam> padded = staleBuffer<TypeParam>();
    padAToVnniK(a.data(), m, k, padded);
    const std::int64_t padded_k = vnniPaddedK(k);
    ASSERT_EQ(std::int64_t(padded.size()), m * padded_k);
    for (std::int64_t row = 0; row < m; ++row)
      for (std::int64_t col = 0; col < padded_k; ++col)
        ASSERT_EQ(padded[row * padded_k + col], col < k ? a[row * k + col] : TypeParam{});
    if (k % 2 == 0) {
      EXPECT_EQ(padded, a);
    }
  }
}

TYPED_TEST(VnniPacking, BatchedAPaddingPadsEveryRowOfEveryMatrix) {
  const std::int64_t batch = 2, m = 3, k = 3;
  const auto a = fromFloats<TypeParam>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  VnniBuffer<TypeParam> padded = staleBuffer<TypeParam>();
  padAToVnniKBatched(a.data(), batch, m, k, padded);
  EXPECT_EQ(padded, fromFloats<TypeParam>({1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0,  //
                                           10, 11, 12, 0, 13, 14, 15, 0, 16, 17, 18, 0}));
}

// AMX tiles take K in steps of 32: A and B padded past K with zeros, stale contents overwritten.
TYPED_TEST(VnniPacking, PaddingToAChosenKFillsZerosPastK) {
  const std::int64_t batch = 2, m = 2, k = 3, n = 2, padded_k = 6;
  const auto a = fromFloats<TypeParam>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  VnniBuffer<TypeParam> padded = staleBuffer<TypeParam>();
  padAToKBatched(a.data(), batch, m, k, padded_k, padded);
  EXPECT_EQ(padded, fromFloats<TypeParam>({1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0, 0,  //
                                           7, 8, 9, 0, 0, 0, 10, 11, 12, 0, 0, 0}));
  const auto b = fromFloats<TypeParam>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});  // 2 x (3 x 2)
  VnniBuffer<TypeParam> packed = staleBuffer<TypeParam>();
  packBVnniBatched(b.data(), batch, k, n, padded_k, packed);
  // Per matrix [3 pairs][2 columns][2]: pair 0 = rows 0-1, pair 1 = row 2 and a zero row, pair 2 zero.
  EXPECT_EQ(packed, fromFloats<TypeParam>({1, 3, 2, 4, 5, 0, 6, 0, 0, 0, 0, 0,  //
                                           7, 9, 8, 10, 11, 0, 12, 0, 0, 0, 0, 0}));
}

// The dot-product kernels read B's VNNI rows in whole vectors: columns past N are zero.
TYPED_TEST(VnniPacking, PaddingToAChosenNFillsZeroColumns) {
  const auto b = fromFloats<TypeParam>({1, 2, 3, 4, 5, 6});  // 1 x (3 x 2)
  VnniBuffer<TypeParam> packed = staleBuffer<TypeParam>();
  packBVnniBatched(b.data(), 1, 3, 2, 4, 3, packed);
  // [2 pairs][3 columns][2]: pair 0 = rows 0-1, pair 1 = row 2 and a zero row; column 2 zero.
  EXPECT_EQ(packed, fromFloats<TypeParam>({1, 3, 2, 4, 0, 0, 5, 0, 6, 0, 0, 0}));
  EXPECT_THROW(packBVnniBatched(b.data(), 1, 3, 2, 4, 1, packed), Error);  // below N
}

TEST(VnniPacking, PaddedKMustBeEvenAndAtLeastK) {
  BFloat16Buffer packed;
  const std::vector<BFloat16> values(64, BFloat16{0x3f80});
  EXPECT_THROW(packBVnniBatched(values.data(), 1, 4, 2, 2, packed), Error);  // below K
  EXPECT_THROW(packBVnniBatched(values.data(), 1, 4, 2, 5, packed), Error);  // odd
  EXPECT_THROW(padAToKBatched(values.data(), 1, 2, 4, 2, packed), Error);
  EXPECT_THROW(padAToK(values.data(), 2, 3, 3, packed), Error);
  EXPECT_NO_THROW(padAToK(values.data(), 2, 3, 32, packed));
}

// The blocked VNNI tiles are packBBlocked's tiles, each interleaved.
TEST(VnniPacking, BlockedTilesAreThoseOfPackBBlocked) {
  const std::int64_t k = 37, n = 21;
  const GemmBlocking blocking{8, 8, 16};
  const auto b = distinctValues<float>(k * n);
  FloatBuffer plain, vnni;
  packBBlocked(b.data(), k, n, blocking, plain);
  packBBlockedVnni(b.data(), k, n, blocking, vnni);
  ASSERT_EQ(plain.size(), vnni.size());
  const std::int64_t tile = blocking.bk * blocking.bn;
  for (std::int64_t t = 0; t < std::int64_t(plain.size()) / tile; ++t)
    for (std::int64_t r = 0; r < blocking.bk; ++r)
      for (std::int64_t c = 0; c < blocking.bn; ++c)
        ASSERT_EQ(vnni[t * tile + ((r / 2) * blocking.bn + c) * 2 + r % 2], plain[t * tile + r * blocking.bn + c]);
}

// What the layouts are for: C = A B as VDPBF16PS computes it, one pair of K
// products per step, from padded A and VNNI B. Small integers: exact in bf16 and in the sums.
TEST(VnniPacking, PairwiseDotProductsOverPaddedOperandsGiveTheProduct) {
  const std::int64_t batch = 2, m = 3, k = 7, n = 5;
  std::vector<float> a_values(batch * m * k), b_values(batch * k * n);
  for (std::size_t i = 0; i < a_values.size(); ++i) a_values[i] = float(int(i * 7 % 9) - 4);
  for (std::size_t i = 0; i < b_values.size(); ++i) b_values[i] = float(int(i * 5 % 11) - 5);
  const auto a = fromFloats<BFloat16>(a_values), b = fromFloats<BFloat16>(b_values);
  BFloat16Buffer padded_a, packed_b;
  padAToVnniKBatched(a.data(), batch, m, k, padded_a);
  packBVnniBatched(b.data(), batch, k, n, packed_b);
  const std::int64_t pairs = vnniPairCount(k), padded_k = vnniPaddedK(k);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float expected = 0.0f, got = 0.0f;
      for (std::int64_t s = 0; s < batch; ++s) {
        for (std::int64_t l = 0; l < k; ++l)
          expected += a_values[(s * m + i) * k + l] * b_values[(s * k + l) * n + j];
        for (std::int64_t p = 0; p < pairs; ++p)
          for (std::int64_t half = 0; half < 2; ++half)
            got += toFloat(padded_a[(s * m + i) * padded_k + 2 * p + half]) *
                   toFloat(packed_b[((s * pairs + p) * n + j) * 2 + half]);
      }
      EXPECT_EQ(got, expected) << i << "," << j;
    }
}

TEST(VnniPacking, RejectsOddOrNonPositiveBlocks) {
  BFloat16Buffer packed;
  const BFloat16 value{0x3f80};
  EXPECT_THROW(packBBlockedVnni(&value, 1, 1, GemmBlocking{64, 64, 3}, packed), Error);
  EXPECT_THROW(packBBlockedVnni(&value, 1, 1, GemmBlocking{64, 0, 2}, packed), Error);
  EXPECT_THROW(packBBlockedVnni(&value, 1, 1, GemmBlocking{64, 2, 0}, packed), Error);
  BFloat16 out{};
  EXPECT_THROW(unpackBBlockedVnni(BFloat16Buffer(4), 1, 1, GemmBlocking{64, 2, 3}, &out), Error);
}

TEST(VnniPacking, RejectsNegativeExtents) {
  BFloat16Buffer packed;
  const BFloat16 value{0x3f80};
  EXPECT_THROW(packBVnni(&value, -1, 1, packed), Error);
  EXPECT_THROW(packBVnniBatched(&value, -1, 1, 1, packed), Error);
  EXPECT_THROW(padAToVnniK(&value, 1, -2, packed), Error);
  EXPECT_THROW(padAToVnniKBatched(&value, -1, 1, 1, packed), Error);
}

TEST(VnniPacking, UnpackRejectsAWronglySizedBuffer) {
  BFloat16Buffer b(6);
  EXPECT_THROW(unpackBVnni(BFloat16Buffer(6), 3, 2, b.data()), Error);  // needs 8: K pads to 4
  EXPECT_THROW(unpackBVnniBatched(BFloat16Buffer(8), 2, 3, 2, b.data()), Error);
  EXPECT_THROW(unpackBBlockedVnni(BFloat16Buffer(3), 3, 2, GemmBlocking{64, 2, 2}, b.data()), Error);
}

}  // namespace
}  // namespace nkbench
