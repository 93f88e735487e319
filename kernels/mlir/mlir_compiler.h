// Compiles a BRGEMM problem through MLIR 22 to host code: payload + schedule ->
// transform interpreter -> bufferization -> LLVM dialect -> LLVM clean-up -> object
// code -> ORC JIT, with the object code kept in the kernel cache (jit/) so that
// a later run links it instead.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "harness/core/error.h"
#include "harness/core/isa.h"
#include "harness/core/problem.h"
#include "harness/host/cache_info.h"
#include "kernels/mlir/amx/tile_state.h"
#include "kernels/mlir/jit/compile_times.h"
#include "kernels/mlir/nanokernel_check.h"
#include "kernels/mlir/schedule/schedule.h"
#include "kernels/mlir/vector/transform_script.h"

namespace mlir {
class ModuleOp;
}

namespace nkbench::mlir_backend {

// A and B are f32, or bf16 (A as pairs, B in VNNI pairs); C is f32, or bf16.
using KernelFunction = void (*)(const void* a, const void* b, void* c);
// An mlp layer's block kernel with a bias: the same function, with the bias of C's N columns.
using BiasKernelFunction = void (*)(const void* a, const void* b, void* c, const float* bias);

// What calls of a tile kernel need: the first tile shape's configuration loaded
// on the calling thread (useTileConfig) and, for emulated tiles, a check for
// emulator faults after them (takeEmulatedTileFault).
struct TileCalls {
  TileMachine machine = TileMachine::Real;
  TilePalette entry_palette;
};

// Where a kernel's code came from: compiled with no kernel cache, compiled and
// stored in it, read from it, or compiled for a cache that could not store it.
enum class KernelCacheUse { Off, Miss, Hit, Unstored };
const char* toString(KernelCacheUse use);  // "off", "miss", "hit", "unstored"

// A JIT-compiled kernel; owns its code in the JIT.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  virtual KernelFunction function() const = 0;
  virtual BiasKernelFunction biasFunction() const = 0;  // a kernel whose problem has a bias
  virtual const std::optional<TileCalls>& tileCalls() const = 0;  // nullopt for vector kernels
  virtual const NanokernelEvidence& evidence() const = 0;
  virtual const std::string& registerBlocks() const = 0;
  virtual const CompileTimes& times() const = 0;
  virtual KernelCacheUse cacheUse() const = 0;
  double compileMs() const { return times().total(); }
};

// Every stage of one compilation, as text, for inspection and tests.
struct CompilationStages {
  std::string payload;
  std::string transform_script;
  std::string scheduled;  // after the transform schedule
  std::string llvm_dialect;
  std::string assembly;   // the host code, as LLVM's code generator emits it
  CompileTimes times;     // of the stages above (no link: nothing is loaded)
};

// The highest ISA level whose every feature `cpu` (an LLVM CPU name) has:
// what `--isa auto` means for code shown for that CPU. Error for a CPU LLVM
// does not know, or one without AVX2 and FMA.
Isa bestIsaOfCpu(const std::string& cpu);

class MlirCompiler {
 public:
  // Code is generated for the host CPU, or for `target_cpu` (an LLVM CPU name such as
  // "sapphirerapids"), with every ISA level above `isa` disabled. A compiler for a
  // named CPU only generates code to inspect: it never JIT-compiles or runs it.
  // `caches` sizes the batch chunks (see RegisterBlockPlan). `kernel_cache`: the
  // directory of the kernel cache (jit/kernel_cache.h); empty: none.
  // Throws nkbench::Error for a CPU LLVM does not know or one that lacks `isa`.
  MlirCompiler(Isa isa, const CacheSizes& caches, const std::string& target_cpu = "",
               const std::string& kernel_cache = "");
  ~MlirCompiler();
  MlirCompiler(const MlirCompiler&) = delete;
  MlirCompiler& operator=(const MlirCompiler&) = delete;

  // Throws nkbench::Error with the first MLIR diagnostic on failure. With
  // `stages` the kernel is compiled (not read from the cache) and every stage kept.
  std::unique_ptr<CompiledKernel> compile(const Problem& brgemm, const Schedule& schedule, Lowering lowering,
                                          CompilationStages* stages = nullptr);
  // Every stage, the assembly included, without JIT compiling or running anything.
  CompilationStages generate(const Problem& brgemm, const Schedule& schedule, Lowering lowering);
  std::string targetDescription() const;  // e.g. "znver4 -avx512f"

 private:
  struct Impl;
  struct Source;
  struct Lowered;
  // The error for a failed stage, with the first MLIR diagnostic.
  using FailureReporter = std::function<Error(const std::string& stage)>;
  Source generateSource(const Problem& brgemm, const Schedule& schedule, Lowering lowering);
  std::string cacheKey(const Source& source, const Problem& brgemm, const Schedule& schedule) const;
  Lowered lower(const Source& source, const Problem& brgemm, CompilationStages* stages, CompileTimes& times);
  Lowered lowerAmx(const Source& source, const Problem& brgemm, CompilationStages* stages,
                   const FailureReporter& fail, CompileTimes& times);
  void runPipeline(mlir::ModuleOp module, const std::string& pipeline, const std::string& stage,
                   const FailureReporter& fail);
  void expandBf16RoundingIfNeeded(mlir::ModuleOp module, const Problem& brgemm, const FailureReporter& fail);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nkbench::mlir_backend
