#include "kernels/libxsmm/libxsmm_mlp.h"

#include <fmt/format.h>
#include <libxsmm.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <type_traits>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/error.h"
#include "kernels/common/block_epilogue.h"
#include "kernels/common/blocked_mlp.h"
#include "kernels/libxsmm/libxsmm_common.h"
#include "operands/bf16.h"

namespace nkbench::libxsmm {
namespace {

// The lanes of one f32 vector in the target's code: libxsmm's m, our columns,
// goes in these, so column blocks of whole vectors need no masked remainder.
std::int64_t vectorLanes(const Target& target) { return target.level && *target.level >= Isa::Avx512 ? 16 : 8; }

MlpBlocking mlpBlocking(const Problem& mlp, const Target& target) {
  // libxsmm masks remainders itself: rows need no multiple; the GEMM path's 64x64 blocks.
  return chooseMlpBlocking(mlp, MlpBlocking{64, 64}, 1, vectorLanes(target));
}

template <class Element>
constexpr bool kIsBf16 = std::is_same_v<Element, BFloat16>;

// libxsmm's BRGEMM by element: f32, or bf16 with B in VNNI pairs summed into an
// f32 C ("bsmm"), so that the bias and the activation see the f32 sum and the
// bf16 output is rounded once, as the reference rounds act(sum + bias).
template <class Element>
struct BrgemmFor;
template <>
struct BrgemmFor<float> {
  using Function = libxsmm_smmfunction_reducebatch_strd;
  static constexpr auto dispatch = &libxsmm_smmdispatch_reducebatch_strd_unroll;
};
template <>
struct BrgemmFor<BFloat16> {
  using Function = libxsmm_bsmmfunction_reducebatch_strd;
  static constexpr auto dispatch = &libxsmm_bsmmdispatch_reducebatch_strd_unroll;
};
template <class Element>
using Brgemm = typename BrgemmFor<Element>::Function;

// One block call, row-major Y = sum over `k_blocks` of A_b * W_b (bm x bc, beta 0),
// as libxsmm's column-major product (rowMajorBrgemmShape): libxsmm's A is our weight
// block (bc x bc; bf16: VNNI pairs [bc/2][bc][2]) and its m our bc. The batch
// strides are the driver's: weight blocks bc x bc, activation blocks bm x bc.
// The kernel is unrolled for the layer's K blocks (libxsmm's unroll hint), so a
// layer whose input has a different block count gets a kernel of its own.
// NULL when libxsmm has no kernel.
template <class Element>
Brgemm<Element> dispatchBlockBrgemm(const MlpBlocking& blocking, std::int64_t k_blocks) {
  const RowMajorBrgemmShape s = rowMajorBrgemmShape(blocking.bm, blocking.bc, blocking.bc, sizeof(Element));
  // The strided dispatcher crashes for alpha != 1 or beta other than 0 and 1.
  const float alpha = 1.0f, beta = 0.0f;
  const int flags = kIsBf16<Element> ? LIBXSMM_GEMM_FLAG_VNNI_A : LIBXSMM_GEMM_FLAG_NONE;
  return BrgemmFor<Element>::dispatch(s.m, s.n, s.k, s.stride_a, s.stride_b, static_cast<libxsmm_blasint>(k_blocks),
                                      &s.lda, &s.ldb, &s.ldc, &alpha, &beta, &flags, nullptr);
}

// libxsmm's view of a block is column-major: m = our bc columns, n = our bm rows.
struct MeltwShape {
  libxsmm_blasint m, n, ld;
  explicit MeltwShape(const MlpBlocking& blocking)
      : m(static_cast<libxsmm_blasint>(blocking.bc)),
        n(static_cast<libxsmm_blasint>(blocking.bm)),
        ld(static_cast<libxsmm_blasint>(blocking.bc)) {}
};

// The f32 block += the bias of its columns (one value per libxsmm row: "COLS").
// 1.17 generates it for AVX-512 targets only (NULL on hsw).
libxsmm_meltwfunction_scale dispatchBiasAdd(const MlpBlocking& blocking) {
  const MeltwShape s(blocking);
  return libxsmm_dispatch_meltw_scale(s.m, s.n, &s.ld, &s.ld, LIBXSMM_DATATYPE_F32, LIBXSMM_DATATYPE_F32,
                                      LIBXSMM_MELTW_FLAG_SCALE_ADD_BIAS_COLS);
}

// The f32 block rounded (to nearest even) to bf16, with ReLU fused where asked
// (which stores a ReLU bit mask too). AVX-512 targets only in 1.17.
libxsmm_meltwfunction_cvtfp32bf16_act dispatchConvert(const MlpBlocking& blocking, bool relu) {
  const MeltwShape s(blocking);
  return libxsmm_dispatch_meltw_cvtfp32bf16_act(
      s.m, s.n, &s.ld, &s.ld, LIBXSMM_DATATYPE_F32, LIBXSMM_DATATYPE_BF16,
      relu ? LIBXSMM_MELTW_FLAG_CVTA_FUSE_RELU : LIBXSMM_MELTW_FLAG_CVTA_NONE);
}

// Bytes of the ReLU mask the fused convert stores for one block: one bit per
// element; measured on 1.17 at every bm, bc up to 64, it stays within each row's
// bits rounded up to bytes plus 3; rows rounded up to 64 bits, plus 64 bytes, here.
std::int64_t reluMaskBytes(const MlpBlocking& blocking) { return blocking.bm * ((blocking.bc + 63) / 64) * 8 + 64; }

// Elements rounded up to whole 64-byte lines, so that each thread's scratch has lines of its own.
template <class T>
std::int64_t lineRounded(std::int64_t elements) {
  constexpr std::int64_t line = 64 / sizeof(T);
  return (elements + line - 1) / line * line;
}

// cpx adds bf16 instructions only: libxsmm's f32 code for it is AVX-512 code.
std::string f32Level(const Target& target) {
  return isaUsed(target.level == Isa::Avx512Bf16 ? std::optional<Isa>(Isa::Avx512) : target.level);
}

template <class Element>
class LibxsmmMlpKernel final : public Kernel {
  static constexpr bool kBf16 = kIsBf16<Element>;

 public:
  LibxsmmMlpKernel(const Problem& mlp, const Operands& operands, const Target& target, int threads)
      : operands_(operands),
        threads_(std::max(threads, 1)),
        bias_(mlp.mlp.bias),
        activation_(mlp.mlp.activation),
        blocked_(mlp, mlpBlocking(mlp, target), kBf16 ? BLayout::VnniPairs : BLayout::Plain) {
    const MlpBlocking& blocking = blocked_.blocking();
    // One kernel per distinct K-block count, dispatched here: calls are thread-safe from then on.
    std::map<std::int64_t, Brgemm<Element>> by_k_blocks;
    for (std::int64_t layer = 0; layer < blocked_.layerCount(); ++layer) {
      const std::int64_t k_blocks = blocked_.kBlocks(layer);
      auto [it, inserted] = by_k_blocks.try_emplace(k_blocks, nullptr);
      if (inserted) it->second = dispatchBlockBrgemm<Element>(blocking, k_blocks);
      if (it->second == nullptr)
        throw Error(fmt::format("libxsmm ({}) returned no {} block kernel for {}", target.name, toString(mlp.dtype),
                                blocked_.blockProblem(layer).describe()));
      layers_.push_back({it->second, static_cast<unsigned long long>(k_blocks)});
    }

    if (bias_) bias_add_ = dispatchBiasAdd(blocking);
    const std::int64_t block = blocking.bm * blocking.bc;
    if constexpr (kBf16) {
      convert_ = dispatchConvert(blocking, relu());
      // Each thread's f32 sums of one block (and the fused ReLU's mask).
      sum_stride_ = lineRounded<float>(block);
      sums_.assign(std::size_t(threads_ * sum_stride_), 0.0f);
      if (relu() && convert_ != nullptr) {
        mask_stride_ = lineRounded<std::uint8_t>(reluMaskBytes(blocking));
        masks_.assign(std::size_t(threads_ * mask_stride_), 0);
      }
    }

    info_.implementation = fmt::format("libxsmm {}brgemm ({}){}{}, per {}x{} block", kBf16 ? "bf16 " : "", target.name,
                                       kBf16 ? " to f32" : "", epilogueWords(), blocking.bm, blocking.bc);
    info_.isa_used = kBf16 ? isaUsed(target.level) : f32Level(target);
    info_.packing = fmt::format("X,W,Y -> {}x{} blocks{}", blocking.bm, blocking.bc, kBf16 ? ", W in VNNI pairs" : "");
  }

  void pack() override {
    blocked_.pack(operands_.aAs<Element>(), operands_.bAs<Element>(), bias_ ? operands_.bias : nullptr);
  }

  void compute() override {
    blocked_.compute(
        [this](std::int64_t layer, const Element* a_panel, const Element* w_panel, Element* y_block,
               const float* bias_block) { blockCall(layer, a_panel, w_panel, y_block, bias_block); },
        threads_);
  }

  void unpack() override { blocked_.unpack(operands_.cAs<Element>()); }
  const KernelInfo& info() const override { return info_; }

 private:
  struct Layer {
    Brgemm<Element> brgemm;
    unsigned long long k_blocks;
  };

  void blockCall(std::int64_t layer, const Element* a_panel, const Element* w_panel, Element* y_block,
                 const float* bias_block) {
    const Layer& l = layers_[std::size_t(layer)];
    const MlpBlocking& blocking = blocked_.blocking();
    const int thread = threads_ > 1 ? omp_get_thread_num() : 0;
    float* sum;
    if constexpr (kBf16)
      sum = sums_.data() + thread * sum_stride_;
    else
      sum = y_block;
    l.brgemm(words(w_panel), words(a_panel), sum, &l.k_blocks);

    const float* loop_bias = bias_block;  // what is left for the harness's loop
    if (bias_block != nullptr && bias_add_ != nullptr) {
      libxsmm_meltw_scale_param param{};
      param.in_ptr = sum;
      param.out_ptr = sum;
      param.bias_vals_ptr = bias_block;
      bias_add_(&param);
      loop_bias = nullptr;
    }
    if constexpr (kBf16) {
      if (convert_ != nullptr && loop_bias == nullptr) {
        libxsmm_meltw_cvtfp32bf16_act_param param{};
        param.in_ptr = sum;
        param.out_ptr = y_block;
        param.actstore_ptr = relu() ? masks_.data() + thread * mask_stride_ : nullptr;
        convert_(&param);
        return;
      }
    }
    // The harness's loop, in f32 on the sums; a bf16 block is then rounded once, as the reference rounds.
    if (loop_bias != nullptr || relu()) applyBlockEpilogue(sum, blocking.bm, blocking.bc, loop_bias, activation_);
    if constexpr (kBf16) toBFloat16(sum, std::size_t(blocking.bm * blocking.bc), y_block);
  }

  // What follows the BRGEMM, for the report: which steps are libxsmm's meltw kernels, which the harness's loop.
  std::string epilogueWords() const {
    std::string meltw;
    std::vector<std::string> loop;
    const bool bias_in_meltw = bias_ && bias_add_ != nullptr;
    if (bias_in_meltw) meltw += " + meltw bias add";
    if (bias_ && !bias_in_meltw) loop.push_back("bias");
    if constexpr (kBf16) {
      // The convert fuses ReLU; without it (or with the bias left to the loop) the loop rounds too.
      if (convert_ != nullptr && (!bias_ || bias_in_meltw)) {
        meltw += relu() ? " + meltw relu+bf16 convert" : " + meltw bf16 convert";
      } else {
        if (relu()) loop.push_back("relu");
        loop.push_back("bf16 rounding");
      }
    } else if (relu()) {
      loop.push_back("relu");  // 1.17's meltw relu dispatcher returns no kernel
    }
    std::string words = meltw;
    for (std::size_t step = 0; step < loop.size(); ++step) words += (step == 0 ? ", " : "+") + loop[step];
    if (!loop.empty()) words += " in the harness's loop";
    return words;
  }

  bool relu() const { return activation_ == Activation::Relu; }

  Operands operands_;
  int threads_;
  bool bias_;
  Activation activation_;
  BlockedMlpOf<Element> blocked_;
  std::vector<Layer> layers_;
  libxsmm_meltwfunction_scale bias_add_ = nullptr;
  libxsmm_meltwfunction_cvtfp32bf16_act convert_ = nullptr;
  std::int64_t sum_stride_ = 0, mask_stride_ = 0;
  FloatBuffer sums_;
  AlignedBuffer<std::uint8_t> masks_;
  KernelInfo info_;
};

}  // namespace

std::optional<std::string> mlpUnsupported(const Problem& mlp, const Target& target) {
  if (mlp.dtype != DType::F32 && mlp.dtype != DType::BF16)
    return fmt::format("libxsmm: {} mlps are not supported", toString(mlp.dtype));
  if (mlp.c_dtype != mlp.dtype) return "libxsmm: an mlp's outputs must be of its own dtype";
  if (mlp.accumulate || mlp.batch != 1 || mlp.mlp.count() < 1)
    return "libxsmm: an mlp needs batch 1, beta 0 and a layer";
  const MlpBlocking blocking = mlpBlocking(mlp, target);
  // Dispatching is the only way to ask; the kernels are cached for prepare().
  for (std::size_t width = 0; width + 1 < mlp.mlp.widths.size(); ++width) {
    const std::int64_t k_blocks = (mlp.mlp.widths[width] + blocking.bc - 1) / blocking.bc;
    const bool dispatched = mlp.dtype == DType::BF16 ? dispatchBlockBrgemm<BFloat16>(blocking, k_blocks) != nullptr
                                                     : dispatchBlockBrgemm<float>(blocking, k_blocks) != nullptr;
    if (!dispatched)
      return fmt::format("libxsmm ({}) has no {} brgemm kernel for the {}x{} blocks of {}", target.name,
                         toString(mlp.dtype), blocking.bm, blocking.bc, mlp.describe());
  }
  return std::nullopt;
}

std::unique_ptr<Kernel> makeMlpKernel(const Problem& mlp, const Operands& operands, const Target& target, int threads) {
  if (mlp.dtype == DType::BF16) return std::make_unique<LibxsmmMlpKernel<BFloat16>>(mlp, operands, target, threads);
  return std::make_unique<LibxsmmMlpKernel<float>>(mlp, operands, target, threads);
}

}  // namespace nkbench::libxsmm
