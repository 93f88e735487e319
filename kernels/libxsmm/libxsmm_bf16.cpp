#include "kernels/libxsmm/libxsmm_bf16.h"

#include <fmt/format.h>
#include <libxsmm.h>

#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>
#include <vector>

#include "harness/core/error.h"
#include "kernels/common/blocked_gemm.h"
#include "kernels/common/thread_split.h"
#include "kernels/libxsmm/libxsmm_common.h"
#include "operands/vnni_packing.h"

namespace nkbench::libxsmm {
namespace {

// libxsmm's bf16 BRGEMM by C type: f32 C ("bsmm"), or bf16 C ("bmm"), which it
// sums in f32 and rounds once when storing.
template <class CElement>
struct Bf16BrgemmFor;
template <>
struct Bf16BrgemmFor<float> {
  using Function = libxsmm_bsmmfunction_reducebatch_strd;
  static constexpr auto dispatch = &libxsmm_bsmmdispatch_reducebatch_strd;
};
template <>
struct Bf16BrgemmFor<BFloat16> {
  using Function = libxsmm_bmmfunction_reducebatch_strd;
  static constexpr auto dispatch = &libxsmm_bmmdispatch_reducebatch_strd;
};
template <class CElement>
using Bf16Brgemm = typename Bf16BrgemmFor<CElement>::Function;

// The same problem with K rounded up to even: A gains a zero column, B a zero row.
Problem withVnniK(Problem problem) {
  problem.k = vnniPaddedK(problem.k);
  return problem;
}

GemmBlocking gemmBlocking(const Problem& problem, int threads = 1) {
  return blockingForThreads(problem, kGemmBlock, kLeastGemmBlock, threads, NarrowFirst::Rows,
                            [&](const GemmBlocking& block) { return chooseBf16GemmBlocking(problem, block); });
}

// The BRGEMMs a problem runs as: itself with even K, or for gemm its block
// calls, one for each block shape (edge blocks at their own extent).
std::vector<Problem> kernelProblems(const Problem& problem, int threads) {
  if (problem.kind != OpKind::Gemm) return {withVnniK(problem)};
  const GemmBlocking blocking = gemmBlocking(problem, threads);
  std::vector<Problem> calls;
  for (const BlockShape shape : blockShapesOf(problem, blocking, BlockEdges::Exact))
    calls.push_back(blockProblemOf(problem, blocking, shape, BlockEdges::Exact));
  return calls;
}

// Row-major C = sum_b A_b * B_b as libxsmm's column-major product (rowMajorBrgemmShape),
// libxsmm's A (our B) in VNNI pairs [K/2][N][2] (LIBXSMM_GEMM_FLAG_VNNI_A). K must be
// even. NULL when libxsmm has no kernel.
template <class CElement>
Bf16Brgemm<CElement> dispatchRowMajorBf16(const Problem& problem) {
  const RowMajorBrgemmShape s = rowMajorBrgemmShape(problem.m, problem.n, problem.k, sizeof(libxsmm_bfloat16));
  // The strided dispatcher crashes for alpha != 1 or beta other than 0 and 1.
  const float alpha = 1.0f;
  const float beta = problem.accumulate ? 1.0f : 0.0f;
  const int flags = LIBXSMM_GEMM_FLAG_VNNI_A;
  return Bf16BrgemmFor<CElement>::dispatch(s.m, s.n, s.k, s.stride_a, s.stride_b, &s.lda, &s.ldb, &s.ldc, &alpha, &beta,
                                           &flags, nullptr);
}

bool canDispatch(const Problem& problem) {
  return problem.c_dtype == DType::BF16 ? dispatchRowMajorBf16<BFloat16>(problem) != nullptr
                                        : dispatchRowMajorBf16<float>(problem) != nullptr;
}

template <class CElement>
Bf16Brgemm<CElement> dispatchOrThrow(const Problem& problem, const std::string& target) {
  const Bf16Brgemm<CElement> kernel = dispatchRowMajorBf16<CElement>(problem);
  if (kernel == nullptr)
    throw Error(
        fmt::format("libxsmm ({}) returned no bf16 kernel for {}", target, problem.describe()));
  return kernel;
}

// How a kernel's description names its C type: nothing for f32.
template <class CElement>
constexpr const char* cSuffix() {
  return std::is_same_v<CElement, BFloat16> ? ", bf16 C" : "";
}

template <class CElement>
class Bf16BrgemmKernel final : public Kernel {
 public:
  Bf16BrgemmKernel(const Problem& problem, const Operands& operands, const Target& target,
                   const SharedVnniB& shared_b)
      : problem_(problem),
        operands_(operands),
        batch_(static_cast<unsigned long long>(problem.batch)),
        kernel_(dispatchOrThrow<CElement>(withVnniK(problem), target.name)),
        b_vnni_(shared_b.pairs ? shared_b.pairs : std::make_shared<BFloat16Buffer>()),
        packs_b_(!shared_b.pairs || shared_b.packs) {
    info_.implementation = fmt::format("libxsmm bf16 brgemm ({}){}", target.name, cSuffix<CElement>());
    info_.isa_used = isaUsed(target.level);
    info_.packing = problem.k % kVnniPairBf16 == 0 ? "B -> VNNI [K/2][N][2]"
                                                   : "B -> VNNI [K/2][N][2], A -> even K";
  }

  void pack() override {
    if (packs_b_) packBVnniBatched(operands_.bAs<BFloat16>(), problem_.batch, problem_.k, problem_.n, *b_vnni_);
    // An odd K needs A's zero column; an even one reads A in place.
    if (problem_.k % kVnniPairBf16 != 0)
      padAToVnniKBatched(operands_.aAs<BFloat16>(), problem_.batch, problem_.m, problem_.k,
                         a_padded_);
  }

  void compute() override {
    const BFloat16* a = a_padded_.empty() ? operands_.aAs<BFloat16>() : a_padded_.data();
    kernel_(words(b_vnni_->data()), words(a), words(operands_.cAs<CElement>()), &batch_);
  }

  const KernelInfo& info() const override { return info_; }

 private:
  Problem problem_;
  Operands operands_;
  unsigned long long batch_;
  Bf16Brgemm<CElement> kernel_;
  std::shared_ptr<BFloat16Buffer> b_vnni_;
  bool packs_b_;
  BFloat16Buffer a_padded_;
  KernelInfo info_;
};

template <class CElement>
class Bf16GemmKernel final : public Kernel {
 public:
  Bf16GemmKernel(const Problem& problem, const Operands& operands, const Target& target, int threads)
      : operands_(operands),
        threads_(threads),
        blocked_(problem, gemmBlocking(problem, threads), BLayout::VnniPairs, BlockOrder::MBlocksOuter,
                 BlockEdges::Exact),
        k_blocks_(static_cast<unsigned long long>(blocked_.kBlocks())) {
    for (const BlockShape shape : blocked_.blockShapes())
      block_kernels_[std::size_t(shape)] = dispatchOrThrow<CElement>(blocked_.blockProblem(shape), target.name);
    const GemmBlocking& blocking = blocked_.blocking();
    info_.implementation = fmt::format("libxsmm bf16 brgemm ({}){} per C block", target.name, cSuffix<CElement>());
    info_.isa_used = isaUsed(target.level);
    info_.packing = fmt::format("A,B,C -> {}x{}x{} blocks, B in VNNI pairs{}", blocking.bm, blocking.bn,
                                blocking.bk, blocked_.edgeBlocksText());
  }

  void pack() override { blocked_.pack(operands_.aAs<BFloat16>(), operands_.bAs<BFloat16>()); }

  void compute() override {
    blocked_.compute(
        [this](BlockShape shape, const BFloat16* a_blocks, const BFloat16* b_blocks, CElement* c_block) {
          block_kernels_[std::size_t(shape)](words(b_blocks), words(a_blocks), words(c_block), &k_blocks_);
        },
        threads_);
  }

  void unpack() override { blocked_.unpack(operands_.cAs<CElement>()); }
  const KernelInfo& info() const override { return info_; }

 private:
  Operands operands_;
  int threads_;
  BlockedGemmOf<BFloat16, CElement> blocked_;
  unsigned long long k_blocks_;
  std::array<Bf16Brgemm<CElement>, kBlockShapes> block_kernels_{};
  KernelInfo info_;
};

template <class CElement>
std::unique_ptr<Kernel> makeBf16KernelFor(const Problem& problem, const Operands& operands, const Target& target,
                                          int threads, const SharedVnniB& shared_b) {
  if (problem.kind == OpKind::Gemm)
    return std::make_unique<Bf16GemmKernel<CElement>>(problem, operands, target, threads);
  return std::make_unique<Bf16BrgemmKernel<CElement>>(problem, operands, target, shared_b);
}

}  // namespace

std::optional<std::string> bf16Unsupported(const Problem& problem, const std::string& target, int threads) {
  for (const Problem& kernel : kernelProblems(problem, threads)) {
    const std::int64_t largest_stride = std::max(kernel.k * kernel.n, kernel.m * kernel.k);
    const std::int64_t largest_stride_bytes = largest_stride * std::int64_t{sizeof(libxsmm_bfloat16)};
    if (largest_stride_bytes > std::numeric_limits<libxsmm_blasint>::max())
      return "libxsmm batch strides overflow its 32-bit integers for " + problem.describe();
    // Dispatching is the only way to ask; the kernel is cached for prepare().
    if (!canDispatch(kernel))
      return fmt::format("libxsmm ({}) has no bf16 kernel for {}{}", target, problem.describe(),
                         kernel.m == problem.m && kernel.n == problem.n ? "" : " (its block " + kernel.describe() + ")");
  }
  return std::nullopt;
}

std::unique_ptr<Kernel> makeBf16Kernel(const Problem& problem, const Operands& operands, const Target& target,
                                       int threads, const SharedVnniB& shared_b) {
  if (problem.c_dtype == DType::BF16) return makeBf16KernelFor<BFloat16>(problem, operands, target, threads, shared_b);
  return makeBf16KernelFor<float>(problem, operands, target, threads, shared_b);
}

}  // namespace nkbench::libxsmm
