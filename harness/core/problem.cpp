#include "harness/core/problem.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

namespace nkbench {

std::string_view toString(OpKind kind) {
  switch (kind) {
    case OpKind::Gemm: return "gemm";
    case OpKind::Brgemm: return "brgemm";
    case OpKind::Mlp: return "mlp";
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
  if (text == "mlp") return OpKind::Mlp;
  return std::nullopt;
}

std::string_view toString(Activation activation) { return activation == Activation::Relu ? "relu" : "none"; }

std::optional<Activation> parseActivation(std::string_view text) {
  if (text == "relu") return Activation::Relu;
  if (text == "none") return Activation::None;
  return std::nullopt;
}

std::int64_t MlpLayers::weightOffset(std::int64_t layer) const {
  std::int64_t offset = 0;
  for (std::int64_t l = 0; l < layer; ++l) offset += widths[std::size_t(l)] * widths[std::size_t(l) + 1];
  return offset;
}

std::int64_t MlpLayers::biasOffset(std::int64_t layer) const {
  std::int64_t offset = 0;
  for (std::int64_t l = 0; l < layer; ++l) offset += widths[std::size_t(l) + 1];
  return offset;
}

std::string MlpLayers::widthsText() const { return fmt::format("{}", fmt::join(widths, "-")); }

std::string MlpLayers::epilogueText() const {
  if (bias && activation == Activation::Relu) return "bias+relu";
  if (bias) return "bias";
  return activation == Activation::Relu ? "relu" : "";
}

std::optional<std::vector<std::int64_t>> parseMlpWidths(std::string_view text) {
  std::vector<std::int64_t> widths;
  while (true) {
    const std::size_t dash = text.find('-');
    const std::string_view item = text.substr(0, dash);
    std::int64_t width = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), width);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || width < 1) return std::nullopt;
    widths.push_back(width);
    if (dash == std::string_view::npos) break;
    text.remove_prefix(dash + 1);
  }
  if (widths.size() < 2) return std::nullopt;
  return widths;
}

bool parseMlpEpilogue(std::string_view text, MlpLayers& layers) {
  for (const bool bias : {false, true})
    for (const Activation activation : {Activation::None, Activation::Relu}) {
      const MlpLayers candidate{{}, bias, activation};
      if (candidate.epilogueText() != text) continue;
      layers.bias = bias;
      layers.activation = activation;
      return true;
    }
  return false;
}

double Problem::flops() const {
  if (kind != OpKind::Mlp) return 2.0 * double(m) * double(n) * double(k) * double(batch);
  return 2.0 * double(m) * double(mlp.weightOffset(mlp.count()));
}

std::int64_t Problem::bElements() const {
  return kind == OpKind::Mlp ? mlp.weightOffset(mlp.count()) : batch * k * n;
}

std::int64_t Problem::cElements() const { return kind == OpKind::Mlp ? mlpOutputOffset(mlp.count()) : m * n; }

std::int64_t Problem::biasElements() const {
  return kind == OpKind::Mlp && mlp.bias ? mlp.biasOffset(mlp.count()) : 0;
}

Problem Problem::mlpLayer(std::int64_t layer) const {
  Problem gemm;
  gemm.kind = OpKind::Gemm;
  gemm.dtype = dtype;
  gemm.c_dtype = c_dtype;
  gemm.m = m;
  gemm.k = mlp.widths[std::size_t(layer)];
  gemm.n = mlp.widths[std::size_t(layer) + 1];
  return gemm;
}

std::optional<DType> parseDType(std::string_view text) {
  if (text == "f32") return DType::F32;
  if (text == "bf16") return DType::BF16;
  return std::nullopt;
}

std::string Problem::describe() const {
  if (kind == OpKind::Mlp) {
    const std::string epilogue = mlp.epilogueText();
    return fmt::format("mlp {} {}x[{}]{}{}", toString(dtype), m, mlp.widthsText(), epilogue.empty() ? "" : " ",
                       epilogue);
  }
  return fmt::format("{} {} {}x{}x{} b{} beta={}{}{}", toString(kind), toString(dtype), m, n, k, batch,
                     accumulate ? 1 : 0, c_dtype == DType::F32 ? "" : " c=bf16",
                     hasEpilogue() ? " +" + mlp.epilogueText() : "");
}

}  // namespace nkbench
