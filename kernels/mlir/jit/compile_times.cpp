#include "kernels/mlir/jit/compile_times.h"

#include <fmt/format.h>

namespace nkbench::mlir_backend {

std::string CompileTimes::describe() const {
  return fmt::format(
      "generate {:.2f}, parse {:.2f}, schedule {:.2f}, bufferize {:.2f}, lower {:.2f}, translate {:.2f}, optimize "
      "{:.2f}, codegen {:.2f}, cache {:.2f}, link {:.2f}; total {:.2f} ms",
      generate, parse, schedule, bufferize, lower, translate, optimize, codegen, cache, link, total());
}

}  // namespace nkbench::mlir_backend
