// The vocabulary every part of nkbench shares: what one benchmark case computes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nkbench {

enum class OpKind { Gemm, Brgemm, Mlp };
// BF16: bf16 A and B, f32 accumulation. Each backend packs B its own way (VNNI
// pairs for dot-product kernels).
enum class DType { F32, BF16 };

std::string_view toString(OpKind kind);
std::string_view toString(DType dtype);
std::optional<OpKind> parseOpKind(std::string_view text);
std::optional<DType> parseDType(std::string_view text);
std::int64_t elementBytes(DType dtype);  // 4 for f32, 2 for bf16

enum class Activation { None, Relu };
std::string_view toString(Activation activation);                   // "none", "relu"
std::optional<Activation> parseActivation(std::string_view text);

// The layers of an mlp: widths C_0 .. C_L, layer l (1-based) Y_l = act(Y_{l-1} W_l + b_l)
// with Y_0 = X, W_l of C_{l-1} x C_l and b_l of C_l, every layer alike.
struct MlpLayers {
  std::vector<std::int64_t> widths;
  bool bias = false;
  Activation activation = Activation::None;

  std::int64_t count() const { return std::int64_t(widths.size()) - 1; }
  // Elements before layer l's (0-based) weights in all weights, its bias in all biases.
  std::int64_t weightOffset(std::int64_t layer) const;
  std::int64_t biasOffset(std::int64_t layer) const;
  // "1024-1024-1024-1024"; "bias+relu", "bias", "relu" or "" (what follows the product).
  std::string widthsText() const;
  std::string epilogueText() const;
  bool operator==(const MlpLayers&) const = default;
};
// The inverse of widthsText (nullopt unless two or more positive widths) and of epilogueText.
std::optional<std::vector<std::int64_t>> parseMlpWidths(std::string_view text);
bool parseMlpEpilogue(std::string_view text, MlpLayers& layers);

// One matmul problem. All operands are row-major and densely packed:
//   A: batch x M x K   (batch stride M*K)
//   B: batch x K x N   (batch stride K*N)
//   C: M x N
// brgemm: C = beta*C + sum_b A_b * B_b, with beta = 1 when `accumulate`, else 0.
// gemm:   the same with batch == 1 (each backend may pack A/B into its own layout).
// mlp:    layers of GEMMs, each followed by its epilogue (MlpLayers), with
//   A = X: M x C_0 (M rows, the mlp's batch), B: every layer's W_l in turn (row-major),
//   C: every layer's output Y_l (M x C_l) in turn, in c_dtype (the next layer reads it),
//   the biases b_l in turn as f32 (Operands::bias); k = C_0, n = C_L, batch 1, beta 0.
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
  // kind mlp: its layers. A brgemm block of an mlp layer carries the layer's
  // epilogue here (bias, activation; no widths): C = act(sum + bias), the bias
  // f32 with one value per column of C.
  MlpLayers mlp;

  bool hasEpilogue() const { return mlp.bias || mlp.activation != Activation::None; }

  // An mlp counts its GEMMs' FLOPs only, 2 M sum C_{l-1} C_l, as libxsmm-dnn's MLP does.
  double flops() const;
  std::int64_t reductionLength() const { return k * batch; }
  std::int64_t aElements() const { return batch * m * k; }
  std::int64_t bElements() const;
  std::int64_t cElements() const;
  std::int64_t biasElements() const;  // 0 unless an mlp with biases
  // An mlp's layer l (0-based) as the GEMM it multiplies: M x C_{l+1} x C_l.
  Problem mlpLayer(std::int64_t layer) const;
  // Elements of C before layer l's (0-based) output.
  std::int64_t mlpOutputOffset(std::int64_t layer) const { return m * mlp.biasOffset(layer); }
  // "brgemm f32 64x64x64 b32 beta=1" ("brgemm bf16 ... beta=1 c=bf16" for a bf16 C),
  // "mlp f32 256x[1024-1024-1024] bias+relu", "brgemm ... beta=0 +bias+relu" for an mlp's block, for messages.
  std::string describe() const;
};

}  // namespace nkbench
