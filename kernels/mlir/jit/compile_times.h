// Where a kernel's compile time goes, stage by stage, for `show` and the tests
// that keep it small.
#pragma once

#include <string>

namespace nkbench::mlir_backend {

struct CompileTimes {  // milliseconds
  double generate = 0;   // register-block plan, payload and transform script as text
  double parse = 0;      // MLIR parser
  double schedule = 0;   // transform interpreter
  double bufferize = 0;  // one-shot bufferization and its clean-up
  double lower = 0;      // to the LLVM dialect (with the structural check's op counts)
  double translate = 0;  // LLVM dialect -> LLVM IR
  double optimize = 0;   // LLVM's module pipeline
  double codegen = 0;    // machine code, as an object file
  double cache = 0;      // kernel cache: key, lookup, and reading or writing the entry
  double link = 0;       // loading the object into the JIT, resolving the kernel

  double total() const {
    return generate + parse + schedule + bufferize + lower + translate + optimize + codegen + cache + link;
  }
  // "generate 0.1, parse 1.2, ..., total 14.0 ms"
  std::string describe() const;
};

}  // namespace nkbench::mlir_backend
