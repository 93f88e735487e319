#include "kernels/mlir/payload_ir.h"

#include <fmt/format.h>

namespace nkbench::mlir_backend {

std::string buildPayload(const Problem& p) {
  const std::string a = fmt::format("{}x{}x{}xf32", p.batch, p.m, p.k);
  const std::string b = fmt::format("{}x{}x{}xf32", p.batch, p.k, p.n);
  const std::string c = fmt::format("{}x{}xf32", p.m, p.n);
  std::string init = "%c";
  std::string fill;
  if (!p.accumulate) {
    fill = fmt::format(
        "    %zero = arith.constant 0.0 : f32\n"
        "    %c_zero = linalg.fill ins(%zero : f32) outs(%c : tensor<{0}>) -> tensor<{0}>\n",
        c);
    init = "%c_zero";
  }
  // llvm.noalias lets LLVM keep C in registers across loads of A and B.
  return fmt::format(
      "func.func @{fn}(%A: memref<{a}> {{llvm.noalias}}, %B: memref<{b}> {{llvm.noalias}},\n"
      "                %C: memref<{c}> {{llvm.noalias}}) {{\n"
      "    %a = bufferization.to_tensor %A restrict : memref<{a}> to tensor<{a}>\n"
      "    %b = bufferization.to_tensor %B restrict : memref<{b}> to tensor<{b}>\n"
      "    %c = bufferization.to_tensor %C restrict writable : memref<{c}> to tensor<{c}>\n"
      "{fill}"
      "    %r = linalg.batch_reduce_matmul ins(%a, %b : tensor<{a}>, tensor<{b}>)\n"
      "                                    outs({init} : tensor<{c}>) -> tensor<{c}>\n"
      "    bufferization.materialize_in_destination %r in restrict writable %C\n"
      "        : (tensor<{c}>, memref<{c}>) -> ()\n"
      "    return\n"
      "}}\n",
      fmt::arg("fn", kKernelFunction), fmt::arg("a", a), fmt::arg("b", b), fmt::arg("c", c),
      fmt::arg("fill", fill), fmt::arg("init", init));
}

}  // namespace nkbench::mlir_backend
