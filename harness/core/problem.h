// The vocabulary every part of nkbench shares: what one benchmark case computes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nkbench {

enum class OpKind { Gemm, Brgemm };
// BF16: bf16 A and B, f32 accumulation. Each backend packs B its own way (VNNI
// pairs for dot-product kernels).
enum class DType { F32, BF16 };

std::string_view toString(OpKind kind);
std::string_view toString(DType dtype);
std::optional<OpKind> parseOpKind(std::string_view text);
std::optional<DType> parseDType(std::string_view text);
std::int64_t elementBytes(DType dtype);  // 4 for f32, 2 for bf16

// One matmul problem. All operands are row-major and densely packed:
//   A: batch x M x K   (batch stride M*K)
//   B: batch x K x N   (batch stride K*N)
//   C: M x N
// brgemm: C = beta*C + sum_b A_b * B_b, with beta = 1 when `accumulate`, else 0.
// gemm:   the same with batch == 1 (each backend may pack A/B into its own layout).
struct Problem {
  OpKind kind = OpKind::Brgemm;
  DType dtype = DType::F32;    // A and B
  // C: f32, or bf16 for bf16 problems. A bf16 C is read (beta 1) and written as
  // bf16; the sum is kept in f32 and rounded to bf16 once, at the end.
  DType c_dtype = DType::F32;
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  std::int64_t batch = 1;
  bool accumulate = false;

  double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(batch); }
  std::int64_t reductionLength() const { return k * batch; }
  std::int64_t aElements() const { return batch * m * k; }
  std::int64_t bElements() const { return batch * k * n; }
  std::int64_t cElements() const { return m * n; }
  // "brgemm f32 64x64x64 b32 beta=1" ("brgemm bf16 ... beta=1 c=bf16" for a bf16 C), for messages.
  std::string describe() const;
};

}  // namespace nkbench
