#include "kernels/mlir/tuning/shape_class.h"

#include <fmt/format.h>

#include <sstream>
#include <vector>

namespace nkbench::mlir_backend {
namespace {

const char* rowsBin(std::int64_t m) { return m < 8 ? "m1-7" : m < 32 ? "m8-31" : "m32+"; }
const char* columnsBin(std::int64_t n) { return n < 16 ? "n1-15" : n < 64 ? "n16-63" : "n64+"; }

const char* footprintBin(const Problem& p, const CacheSizes& caches) {
  const std::int64_t element = p.dtype == DType::BF16 ? 2 : 4;
  std::int64_t bytes = (p.m * p.k + p.k * p.n) * p.batch * element;
  if (p.kind == OpKind::Gemm) bytes += p.m * p.n * (p.c_dtype == DType::BF16 ? 2 : 4);
  if (bytes <= caches.l1d_bytes) return "l1";
  if (bytes <= caches.l2_bytes) return "l2";
  return "mem";
}

}  // namespace

std::string shapeClassOf(const Problem& p, const CacheSizes& caches) {
  return fmt::format("{} {} {} {} {}", toString(p.kind), toString(p.dtype), rowsBin(p.m), columnsBin(p.n),
                     footprintBin(p, caches));
}

std::optional<DType> shapeClassDType(const std::string& shape_class) {
  std::istringstream in(shape_class);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  if (words.size() != 5) return std::nullopt;
  return parseDType(words[1]);
}

}  // namespace nkbench::mlir_backend
