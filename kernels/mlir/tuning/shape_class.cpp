#include "kernels/mlir/tuning/shape_class.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>
#include <vector>

namespace nkbench::mlir_backend {
namespace {

constexpr std::array<std::string_view, 3> kRowsBins = {"m1-7", "m8-31", "m32+"};
constexpr std::array<std::string_view, 3> kColumnsBins = {"n1-15", "n16-63", "n64+"};
constexpr std::array<std::string_view, 3> kFootprintBins = {"l1", "l2", "mem"};

std::string_view rowsBin(std::int64_t m) { return kRowsBins[m < 8 ? 0 : m < 32 ? 1 : 2]; }
std::string_view columnsBin(std::int64_t n) { return kColumnsBins[n < 16 ? 0 : n < 64 ? 1 : 2]; }

std::string_view footprintBin(const Problem& p, const CacheSizes& caches) {
  const std::int64_t element = p.dtype == DType::BF16 ? 2 : 4;
  std::int64_t bytes = (p.m * p.k + p.k * p.n) * p.batch * element;
  if (p.kind == OpKind::Gemm) bytes += p.m * p.n * (p.c_dtype == DType::BF16 ? 2 : 4);
  return kFootprintBins[bytes <= caches.l1d_bytes ? 0 : bytes <= caches.l2_bytes ? 1 : 2];
}

bool isOneOf(const std::string& word, const std::array<std::string_view, 3>& bins) {
  return std::find(bins.begin(), bins.end(), word) != bins.end();
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
  if (words.size() != 5 || !parseOpKind(words[0]) || !isOneOf(words[2], kRowsBins) ||
      !isOneOf(words[3], kColumnsBins) || !isOneOf(words[4], kFootprintBins))
    return std::nullopt;
  // Word for word, one space apart: runs look classes up by their text.
  if (shape_class != fmt::format("{} {} {} {} {}", words[0], words[1], words[2], words[3], words[4]))
    return std::nullopt;
  return parseDType(words[1]);
}

}  // namespace nkbench::mlir_backend
