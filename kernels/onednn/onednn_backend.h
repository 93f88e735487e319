// oneDNN 2.6 matmul (f32, or bf16 A and B with an f32 or bf16 C): "onednn" reads B in place
// (row-major), "onednn-packed" lets oneDNN pick a blocked weights layout and
// reorders B into it in pack().
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace nkbench {

// Always available; without oneDNN at build time it reports every problem as skipped.
std::unique_ptr<Backend> makeOnednnBackend(const BackendConfig& config, bool blocked_weights);

}  // namespace nkbench
