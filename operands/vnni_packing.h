// VNNI layout of bf16 operands: the dot-product instructions (VDPBF16PS, AMX
// TDPBF16PS) multiply pairs of consecutive K values, so B keeps each pair of
// consecutive K rows interleaved, element (k, n) at [k / 2][n][k % 2]. An odd
// K gets one zero row in B and one zero column in A, which leaves every dot
// product unchanged; K is padded, never refused.
//
// Row-major K x N B          -> [ceil(K/2)][N][2]
// batch x K x N B            -> [batch][ceil(K/2)][N][2]
// B blocked as packBBlocked  -> [Nb][Kb][bk/2][bn][2]    (bk must be even)
// M x K A                    -> M x K_padded            (K_padded = K rounded up to even)
// batch x M x K A            -> batch x M x K_padded
//
// Each function works on bfloat16 and on float (the same layout, for
// checking). Packing resizes `packed` and writes every element, padding
// included; unpacking drops the padding.
#pragma once

#include <concepts>
#include <cstdint>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"
#include "operands/bf16.h"
#include "operands/packing.h"

namespace nkbench {

// K values per dot-product pair for bf16.
inline constexpr std::int64_t kVnniPairBf16 = 2;

template <class T>
concept VnniElement = std::same_as<T, BFloat16> || std::same_as<T, float>;

template <class T>
using VnniBuffer = AlignedBuffer<T>;  // FloatBuffer or BFloat16Buffer

inline std::int64_t vnniPairCount(std::int64_t k) { return (k + 1) / kVnniPairBf16; }
inline std::int64_t vnniPaddedK(std::int64_t k) { return vnniPairCount(k) * kVnniPairBf16; }

// B (K x N row-major) -> [ceil(K/2)][N][2].
template <VnniElement T>
void packBVnni(const T* b, std::int64_t k, std::int64_t n, VnniBuffer<T>& packed);
// B (batch x K x N) -> [batch][ceil(K/2)][N][2].
template <VnniElement T>
void packBVnniBatched(const T* b, std::int64_t batch, std::int64_t k, std::int64_t n,
                      VnniBuffer<T>& packed);
// ... -> [batch][padded_k/2][N][2], the pairs past K zero (padded_k even, >= K;
// AMX tiles take K in steps of 32). Throws Error otherwise.
template <VnniElement T>
void packBVnniBatched(const T* b, std::int64_t batch, std::int64_t k, std::int64_t n,
                      std::int64_t padded_k, VnniBuffer<T>& packed);
// ... -> [batch][padded_k/2][padded_n][2], the columns past N zero as well
// (padded_n >= N: the dot-product kernels read whole vectors of columns).
template <VnniElement T>
void packBVnniBatched(const T* b, std::int64_t batch, std::int64_t k, std::int64_t n,
                      std::int64_t padded_k, std::int64_t padded_n, VnniBuffer<T>& packed);
// B (K x N row-major) -> [Nb][Kb][bk/2][bn][2]: packBBlocked's tiles, each in
// VNNI layout; with Exact edges the last block column's tiles are
// [bk/2][columns][2], their columns rounded up to `edge_column_multiple`
// (whole vectors for the dot-product kernels' masked reads), zero past N.
// Throws Error when blocking.bk is odd: A's blocks would then need a zero
// column inside each K block, not only at the end.
template <VnniElement T>
void packBBlockedVnni(const T* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                      VnniBuffer<T>& packed, BlockEdges edges = BlockEdges::Padded,
                      std::int64_t edge_column_multiple = 1);

// Throws Error unless `edge_column_multiple` is positive and divides the
// column block: rounded up to it, an edge's columns stay within a whole block's.
void checkVnniEdgeColumnMultiple(const GemmBlocking& blocking, std::int64_t edge_column_multiple);

// Inverses: back to row-major K x N (batch x K x N), dropping the padding.
// Throw Error when `packed` does not hold exactly the packed size.
template <VnniElement T>
void unpackBVnni(const VnniBuffer<T>& packed, std::int64_t k, std::int64_t n, T* b);
template <VnniElement T>
void unpackBVnniBatched(const VnniBuffer<T>& packed, std::int64_t batch, std::int64_t k,
                        std::int64_t n, T* b);
template <VnniElement T>
void unpackBBlockedVnni(const VnniBuffer<T>& packed, std::int64_t k, std::int64_t n,
                        const GemmBlocking& blocking, T* b, BlockEdges edges = BlockEdges::Padded,
                        std::int64_t edge_column_multiple = 1);

// A (M x K row-major) -> M x K_padded, the extra column (odd K) zero.
template <VnniElement T>
void padAToVnniK(const T* a, std::int64_t m, std::int64_t k, VnniBuffer<T>& padded);
// A (batch x M x K) -> batch x M x K_padded.
template <VnniElement T>
void padAToVnniKBatched(const T* a, std::int64_t batch, std::int64_t m, std::int64_t k,
                        VnniBuffer<T>& padded);
// A (M x K, or batch x M x K) -> rows of padded_k, the columns past K zero
// (padded_k even, >= K). Throws Error otherwise.
template <VnniElement T>
void padAToK(const T* a, std::int64_t m, std::int64_t k, std::int64_t padded_k, VnniBuffer<T>& padded);
template <VnniElement T>
void padAToKBatched(const T* a, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t padded_k,
                    VnniBuffer<T>& padded);

}  // namespace nkbench
