#pragma once

#include <memory>

#include "kernels/backend.h"

namespace nkbench {

// "mlir": the nanokernel compiler. "mlir-default": the same payload and tiling
// lowered by upstream's generic vector lowering, to measure what nanokernels add.
std::unique_ptr<Backend> makeMlirBackend(const BackendConfig& config);
std::unique_ptr<Backend> makeMlirDefaultBackend(const BackendConfig& config);

}  // namespace nkbench
