// Eigen's mlp (the reference route): each layer one Eigen product, then the
// bias and the activation as passes over its output.
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace nkbench::eigen {

std::unique_ptr<Kernel> makeMlpKernel(const Problem& problem, const Operands& operands, int threads);

}  // namespace nkbench::eigen
