// libxsmm 1.17: JIT-generated fp32 and bf16 (f32 or bf16 C) BRGEMM kernels; GEMM runs as
// BRGEMM over blocks, an mlp as BRGEMM per output block with its epilogue (libxsmm_mlp.h).
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace nkbench {

// Always available; without libxsmm at build time it reports every problem as skipped.
std::unique_ptr<Backend> makeLibxsmmBackend(const BackendConfig& config);

}  // namespace nkbench
