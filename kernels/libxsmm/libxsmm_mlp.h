// libxsmm 1.17's mlp route (f32, and bf16 with a bf16 C); only built with libxsmm.
// The shared blocked driver (kernels/common/blocked_mlp.h) keeps the activations
// blocked between layers; each output block is one libxsmm stride-based BRGEMM
// (bm x bc x bc blocks, batch = the layer's K blocks, beta 0), then the bias and
// the activation while the block is in cache: by libxsmm's element-wise (meltw)
// kernels where 1.17 has them for the process's target, by a plain loop of the
// harness's where it has none (see KernelInfo::implementation for which).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "kernels/backend.h"
#include "kernels/libxsmm/libxsmm_bf16.h"

namespace nkbench::libxsmm {

// nullopt when libxsmm, at the process's target, dispatches every block kernel
// `mlp` needs (bf16: what the bf16 GEMM path needs, libxsmm's bf16 BRGEMM with
// B in VNNI pairs); otherwise why not. dtype, target and thread checks are the caller's.
std::optional<std::string> mlpUnsupported(const Problem& mlp, const Target& target);

// `threads`: each layer's output blocks are shared out among them (blocked_mlp.h).
std::unique_ptr<Kernel> makeMlpKernel(const Problem& mlp, const Operands& operands, const Target& target, int threads);

}  // namespace nkbench::libxsmm
