// libxsmm 1.17 bf16 kernels (bf16 A and B, f32 accumulation, f32 or bf16 C) for the libxsmm
// backend; only built with libxsmm. BRGEMM is one strided bf16 BRGEMM call on B in
// VNNI pairs; GEMM runs as bf16 BRGEMM calls over blocks, as for f32.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "kernels/backend.h"
#include "kernels/common/row_panels.h"

namespace nkbench::libxsmm {

// The code target libxsmm dispatches for in this process: its own name ("cpx") and
// the nkbench level that names it (Isa::Avx512Bf16), for KernelInfo; no level below
// AVX2 (a target forced down with LIBXSMM_TARGET), which no nkbench level names.
struct Target {
  std::string name;
  std::optional<Isa> level;
};

// `level` as KernelInfo::isa_used spells it: empty without one.
inline std::string isaUsed(std::optional<Isa> level) { return level ? std::string(toString(*level)) : ""; }

// nullopt when libxsmm, at the process's target, dispatches the bf16 kernels that
// `problem` needs (gemm: its block kernels on `threads` threads, edge blocks'
// included); otherwise why not. Shape checks that bf16 shares with f32 (batch 1
// for gemm, threads, target) are the caller's.
std::optional<std::string> bf16Unsupported(const Problem& problem, const std::string& target, int threads = 1);

// `threads`: a GEMM's C blocks are shared out among them (blocked_gemm.h).
// `shared_b`: a BRGEMM row panel's share of the B its panels read.
std::unique_ptr<Kernel> makeBf16Kernel(const Problem& problem, const Operands& operands, const Target& target,
                                       int threads, const SharedVnniB& shared_b = {});

}  // namespace nkbench::libxsmm
