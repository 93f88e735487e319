#include "kernels/libxsmm/libxsmm_backend.h"

#include <fmt/format.h>

#include "harness/core/error.h"

#if defined(NKBENCH_HAVE_LIBXSMM)
#include <libxsmm.h>

#include <algorithm>
#include <array>
#include <limits>

#include "kernels/common/blocked_gemm.h"
#include "kernels/common/row_panels.h"
#include "kernels/common/thread_split.h"
#include "kernels/libxsmm/libxsmm_bf16.h"
#include "kernels/libxsmm/libxsmm_common.h"
#include "kernels/libxsmm/libxsmm_mlp.h"
#endif

namespace nkbench {
namespace {

#if defined(NKBENCH_HAVE_LIBXSMM)

int targetArchId(Isa cap) {
  switch (cap) {
    case Isa::Avx2: return LIBXSMM_X86_AVX2;
    case Isa::Avx512: return LIBXSMM_X86_AVX512_CORE;  // "skx": F, BW, DQ, VL
    case Isa::Avx512Bf16:
    case Isa::AmxEmulated:
    case Isa::Amx: return LIBXSMM_X86_AVX512_CPX;  // 1.17's best below AMX: it generates no AMX code
  }
  return LIBXSMM_X86_AVX2;
}

// The nkbench level a libxsmm target's code needs; nullopt below AVX2 (a target
// forced down with LIBXSMM_TARGET), which no nkbench level names.
std::optional<Isa> levelOf(int arch_id) {
  if (arch_id >= LIBXSMM_X86_AVX512_CPX) return Isa::Avx512Bf16;
  if (arch_id >= LIBXSMM_X86_AVX512_CORE) return Isa::Avx512;
  if (arch_id >= LIBXSMM_X86_AVX2) return Isa::Avx2;
  return std::nullopt;
}

// cpx adds bf16 instructions only: libxsmm's f32 code for it is AVX-512 code.
std::string f32Level(const libxsmm::Target& target) {
  return libxsmm::isaUsed(target.level == Isa::Avx512Bf16 ? Isa::Avx512 : target.level);
}

// libxsmm's code registry does not key kernels by target, so the target is fixed
// once per process, before the first dispatch.
struct ProcessTarget {
  int detected_id;  // what libxsmm found from CPUID (or LIBXSMM_TARGET)
  int id;
  libxsmm::Target target;
};

const ProcessTarget& processTarget(Isa first_cap) {
  static const ProcessTarget target = [first_cap] {
    libxsmm_init();
    const int detected = libxsmm_get_target_archid();
    libxsmm_set_target_archid(std::min(detected, targetArchId(first_cap)));
    const int id = libxsmm_get_target_archid();
    return ProcessTarget{detected, id, {libxsmm_get_target_arch(), levelOf(id)}};
  }();
  return target;
}

bool fitsBlasInt(std::int64_t value) {
  return value <= std::numeric_limits<libxsmm_blasint>::max();
}

// Row-major C = sum_b A_b * B_b as libxsmm's column-major product (rowMajorBrgemmShape).
libxsmm_smmfunction_reducebatch_strd dispatchRowMajorBrgemm(const Problem& problem) {
  const libxsmm::RowMajorBrgemmShape s = libxsmm::rowMajorBrgemmShape(problem.m, problem.n, problem.k, sizeof(float));
  // The strided dispatcher crashes for alpha != 1 or beta other than 0 and 1.
  const float alpha = 1.0f;
  const float beta = problem.accumulate ? 1.0f : 0.0f;
  const int flags = LIBXSMM_GEMM_FLAG_NONE;
  const auto kernel = libxsmm_smmdispatch_reducebatch_strd(s.m, s.n, s.k, s.stride_a, s.stride_b, &s.lda, &s.ldb,
                                                           &s.ldc, &alpha, &beta, &flags, nullptr);
  if (kernel == nullptr) throw Error("libxsmm returned no kernel for " + problem.describe());
  return kernel;
}

std::optional<std::string> brgemmTooLarge(const Problem& problem) {
  const auto largest_stride = std::max(problem.k * problem.n, problem.m * problem.k);
  if (!fitsBlasInt(largest_stride * std::int64_t{sizeof(float)}))
    return "libxsmm batch strides overflow its 32-bit integers for " + problem.describe();
  return std::nullopt;
}

// libxsmm masks remainders itself, so blocks need no rounding to a vector width.
// Too few C blocks for the threads: fewer rows, as the mlir backend's (blockingForThreads).
GemmBlocking gemmBlocking(const Problem& problem, int threads = 1) {
  return blockingForThreads(problem, libxsmm::kGemmBlock, libxsmm::kLeastGemmBlock, threads, NarrowFirst::Rows,
                            [&](const GemmBlocking& block) { return chooseGemmBlocking(problem, block, 1, 1); });
}

class LibxsmmBrgemmKernel final : public Kernel {
 public:
  LibxsmmBrgemmKernel(const Problem& problem, const Operands& operands, const libxsmm::Target& target)
      : operands_(operands),
        batch_(static_cast<unsigned long long>(problem.batch)),
        kernel_(dispatchRowMajorBrgemm(problem)) {
    info_.implementation = fmt::format("libxsmm brgemm ({})", target.name);
    info_.isa_used = f32Level(target);
  }

  void compute() override { kernel_(operands_.bAs<float>(), operands_.aAs<float>(), operands_.cAs<float>(), &batch_); }
  const KernelInfo& info() const override { return info_; }

 private:
  Operands operands_;
  unsigned long long batch_;
  libxsmm_smmfunction_reducebatch_strd kernel_;
  KernelInfo info_;
};

class LibxsmmGemmKernel final : public Kernel {
 public:
  LibxsmmGemmKernel(const Problem& problem, const Operands& operands, const libxsmm::Target& target, int threads)
      : operands_(operands),
        threads_(threads),
        blocked_(problem, gemmBlocking(problem, threads), BLayout::Plain, BlockOrder::MBlocksOuter,
                 BlockEdges::Exact),
        k_blocks_(static_cast<unsigned long long>(blocked_.kBlocks())) {
    for (const BlockShape shape : blocked_.blockShapes())
      block_kernels_[std::size_t(shape)] = dispatchRowMajorBrgemm(blocked_.blockProblem(shape));
    const GemmBlocking& blocking = blocked_.blocking();
    info_.implementation = fmt::format("libxsmm brgemm ({}) per C block", target.name);
    info_.isa_used = f32Level(target);
    info_.packing = fmt::format("A,B,C -> {}x{}x{} blocks{}", blocking.bm, blocking.bn, blocking.bk,
                                blocked_.edgeBlocksText());
  }

  void pack() override { blocked_.pack(operands_.aAs<float>(), operands_.bAs<float>()); }

  void compute() override {
    blocked_.compute(
        [this](BlockShape shape, const float* a_blocks, const float* b_blocks, float* c_block) {
          block_kernels_[std::size_t(shape)](b_blocks, a_blocks, c_block, &k_blocks_);
        },
        threads_);
  }

  void unpack() override { blocked_.unpack(operands_.cAs<float>()); }
  const KernelInfo& info() const override { return info_; }

 private:
  Operands operands_;
  int threads_;
  BlockedGemm blocked_;
  unsigned long long k_blocks_;
  std::array<libxsmm_smmfunction_reducebatch_strd, kBlockShapes> block_kernels_{};
  KernelInfo info_;
};

class LibxsmmBackend final : public Backend {
 public:
  explicit LibxsmmBackend(const BackendConfig& config)
      : config_(config), target_(processTarget(config.isa)) {}

  std::string name() const override { return "libxsmm"; }
  std::string version() const override { return LIBXSMM_VERSION; }

  std::optional<std::string> unsupportedReason(const Problem& problem) const override {
    if (problem.m < 1 || problem.n < 1 || problem.k < 1 || problem.batch < 1)
      return "libxsmm needs M, N, K and batch of at least 1";
    if (problem.dtype != DType::F32 && problem.dtype != DType::BF16)
      return fmt::format("libxsmm: {} is not supported yet", toString(problem.dtype));
    if (problem.c_dtype == DType::BF16 && problem.dtype != DType::BF16) return "libxsmm: a bf16 C needs bf16 A and B";
    if (auto reason = brgemmThreadsUnsupported("libxsmm", problem, config_.threads)) return reason;
    const int wanted_id = std::min(target_.detected_id, targetArchId(config_.isa));
    if (wanted_id != target_.id)
      return fmt::format("libxsmm's target is fixed per process at {} and cannot follow the {} cap",
                         target_.target.name, toString(config_.isa));
    if (problem.kind == OpKind::Gemm) {
      if (problem.batch != 1) return "libxsmm gemm needs batch 1";
      if (problem.accumulate) return "libxsmm gemm runs with beta 0 only";
    }
    // An mlp's layers run as BRGEMMs over its blocks (libxsmm_mlp.h); bf16 needs the bf16 BRGEMM as GEMMs do.
    if (problem.kind == OpKind::Mlp) return libxsmm::mlpUnsupported(problem, target_.target);
    if (problem.kind == OpKind::Brgemm) return brgemmUnsupported(problem);
    if (problem.dtype == DType::BF16) return libxsmm::bf16Unsupported(problem, target_.target.name, config_.threads);
    Problem block = problem;  // a GEMM's block call
    const GemmBlocking blocking = gemmBlocking(problem);
    block.m = blocking.bm;
    block.n = blocking.bn;
    block.k = blocking.bk;
    return brgemmTooLarge(block);
  }

  // The kernels prepare() dispatches for a BRGEMM: on more threads, its row panels'.
  std::optional<std::string> brgemmUnsupported(const Problem& brgemm) const {
    auto unsupported = [this](const Problem& call) {
      return call.dtype == DType::BF16 ? libxsmm::bf16Unsupported(call, target_.target.name) : brgemmTooLarge(call);
    };
    if (config_.threads <= 1) return unsupported(brgemm);
    return panelRefusal(brgemm, brgemmThreadPanels(brgemm.m, config_.threads), config_.threads, unsupported);
  }

  std::unique_ptr<Kernel> prepare(const Problem& problem, const Operands& operands) override {
    if (auto reason = unsupportedReason(problem)) throw Error(*reason);
    if (problem.kind == OpKind::Mlp) return libxsmm::makeMlpKernel(problem, operands, target_.target, config_.threads);
    // On more threads, a BRGEMM's row panels, one per thread, sharing one
    // packed B, as the mlir backend runs them.
    if (problem.kind == OpKind::Brgemm && config_.threads > 1)
      return std::make_unique<RowPanelBrgemm>(
          problem, operands, brgemmThreadPanels(problem.m, config_.threads),
          [this, shared_b = PanelsSharedVnniB()](const Problem& panel, const Operands& panel_operands) mutable {
            return prepareBrgemm(panel, panel_operands, shared_b.next());
          },
          config_.threads);
    if (problem.kind == OpKind::Brgemm) return prepareBrgemm(problem, operands);
    if (problem.dtype == DType::BF16)
      return libxsmm::makeBf16Kernel(problem, operands, target_.target, config_.threads);
    return std::make_unique<LibxsmmGemmKernel>(problem, operands, target_.target, config_.threads);
  }

 private:
  // One BRGEMM call on the calling thread.
  std::unique_ptr<Kernel> prepareBrgemm(const Problem& brgemm, const Operands& operands,
                                        const SharedVnniB& shared_b = {}) const {
    if (brgemm.dtype == DType::BF16) return libxsmm::makeBf16Kernel(brgemm, operands, target_.target, 1, shared_b);
    return std::make_unique<LibxsmmBrgemmKernel>(brgemm, operands, target_.target);
  }

  BackendConfig config_;
  const ProcessTarget& target_;
};

#else  // !NKBENCH_HAVE_LIBXSMM

constexpr const char* kNotBuilt = "libxsmm was not found when nkbench was built";

class LibxsmmBackend final : public Backend {
 public:
  explicit LibxsmmBackend(const BackendConfig&) {}

  std::string name() const override { return "libxsmm"; }
  std::string version() const override { return "not built"; }
  std::optional<std::string> unsupportedReason(const Problem&) const override { return kNotBuilt; }
  std::unique_ptr<Kernel> prepare(const Problem&, const Operands&) override {
    throw Error(kNotBuilt);
  }
};

#endif

}  // namespace

std::unique_ptr<Backend> makeLibxsmmBackend(const BackendConfig& config) {
  return std::make_unique<LibxsmmBackend>(config);
}

}  // namespace nkbench
