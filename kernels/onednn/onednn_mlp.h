// oneDNN's mlp: each layer one matmul with its epilogue fused in (the bias as the
// matmul's bias, ReLU as an eltwise post-op). Every layer writes its slice of C in
// place and the next layer reads that slice as its source, so nothing is copied.
// "onednn-packed" reorders each W once in pack() into the layout oneDNN picks;
// activations stay row-major between layers either way.
#pragma once

#include <cstdint>
#include <memory>

#include <dnnl.hpp>

#include "kernels/backend.h"

namespace nkbench::onednn {

// Layer `layer`'s (0-based) matmul: weights row-major, or in oneDNN's choice of layout.
dnnl::matmul::primitive_desc makeMlpLayer(const Problem& problem, std::int64_t layer, bool blocked_weights,
                                          const dnnl::engine& engine);

// Throws dnnl::error where oneDNN cannot make a layer's primitive.
std::unique_ptr<Kernel> makeMlpKernel(const Problem& problem, const Operands& operands, bool blocked_weights,
                                      Isa cap);

}  // namespace nkbench::onednn
