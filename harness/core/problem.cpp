#include "harness/core/problem.h"

#include <fmt/format.h>

namespace nkbench {

std::string_view toString(OpKind kind) {
  switch (kind) {
    case OpKind::Gemm: return "gemm";
    case OpKind::Brgemm: return "brgemm";
  }
  return "?";
}

std::string_view toString(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
  }
  return "?";
}

std::int64_t elementBytes(DType dtype) { return dtype == DType::BF16 ? 2 : 4; }

std::optional<OpKind> parseOpKind(std::string_view text) {
  if (text == "gemm") return OpKind::Gemm;
  if (text == "brgemm") return OpKind::Brgemm;
  return std::nullopt;
}

std::optional<DType> parseDType(std::string_view text) {
  if (text == "f32") return DType::F32;
  if (text == "bf16") return DType::BF16;
  return std::nullopt;
}

std::string Problem::describe() const {
  return fmt::format("{} {} {}x{}x{} b{} beta={}{}", toString(kind), toString(dtype), m, n, k, batch,
                     accumulate ? 1 : 0, c_dtype == DType::F32 ? "" : " c=bf16");
}

}  // namespace nkbench
