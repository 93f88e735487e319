// The interface every backend (mlir, libxsmm, onednn, eigen, ...) implements.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "harness/core/isa.h"
#include "harness/core/problem.h"

namespace nkbench {

// Host operands in the layout documented in problem.h: A and B with elements of
// problem.dtype, C of problem.c_dtype (float, or BFloat16 for bf16).
// `c` holds the initial C (for accumulate) and receives the result. An mlp's
// biases are f32, every layer's in turn (null without biases).
struct Operands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const float* bias = nullptr;

  template <class T>
  const T* aAs() const { return static_cast<const T*>(a); }
  template <class T>
  const T* bAs() const { return static_cast<const T*>(b); }
  template <class T>
  T* cAs() const { return static_cast<T*>(c); }
};

// What a prepared kernel is made of, for the report.
struct KernelInfo {
  std::string implementation;  // e.g. "libxsmm brgemm (cpx)", "brg:avx512_core", "mlir jit znver4"
  std::string register_block;  // "8x32" etc.; empty where the library does not say
  std::string schedule;         // compiler backends: the schedule's name; empty for libraries
  std::string schedule_source;  // where the schedule came from: "analytic", "tuned: FILE", "--schedule"
  std::string kernel_cache;     // compiler backends: "hit", "miss", "off" or "unstored" (all of a case's kernels); empty otherwise
  std::string nanokernel;      // structural evidence of nanokernel composition (mlir only)
  std::string packing;         // e.g. "A,B -> 64x64x64 blocks"; empty when operands are used in place
  std::string caveat;          // what the timing does not mean (emulated AMX); leads the row's note
  // The ISA level the kernel's code was generated for, at or below the run's cap,
  // as toString(Isa) spells it; empty where no level of nkbench's names fits.
  std::string isa_used;
};

// One compiled/dispatched kernel bound to its operands.
class Kernel {
 public:
  virtual ~Kernel() = default;
  // Layout transforms of A and B into the backend's own layout (timed apart as pack_ms).
  virtual void pack() {}
  // The computation that is timed. Reads the (packed) operands, writes C (or a blocked C).
  virtual void compute() = 0;
  // Brings a blocked C back to the row-major C of Operands (counted in pack_ms).
  virtual void unpack() {}
  // Ends a run of compute() calls (a verification, a timed repetition): state the
  // calls shared on this thread is let go, so that the next kernel on it starts
  // clean (AMX: the tiles are released; the next run loads its configuration).
  virtual void finishCalls() {}
  virtual const KernelInfo& info() const = 0;
};

// Everything a backend is told about the run it takes part in.
struct BackendConfig {
  Isa isa = Isa::Avx2;      // the cap every backend honours in this run
  CpuFeatures host;         // what the CPU really has
  // Threads a kernel call may use (one per core, harness/host/omp_threads.h):
  // GEMMs share out their C blocks among them.
  int threads = 1;
  std::string mlir_schedule;  // mlir backends: a schedule (parseScheduleSpec); empty = tuned or analytic
  // mlir backends: the schedules a tuning file chose for this run's ISA level, by
  // shape class (kernels/mlir/tuning/shape_class.h); file empty: no tuning file.
  std::string mlir_tuning_file;
  std::map<std::string, std::string> mlir_tuned_schedules;
  // Measured single-core peaks (harness/host/peak.h, measureBf16RoutePeaks)
  // that choose mlir's bf16 vector route; 0: not measured (the dot product).
  double fp32_fma_peak_gflops = 0.0;
  double bf16_dot_peak_gflops = 0.0;
  // mlir backends: the kernel cache's directory (kernels/mlir/jit/kernel_cache.h); empty: off.
  std::string kernel_cache_dir;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  // nullopt when this backend can run `problem` in this run; otherwise why it is skipped.
  virtual std::optional<std::string> unsupportedReason(const Problem& problem) const = 0;
  // For `list`: a short description of what would run for `problem`, one this
  // backend supports (unsupportedReason is nullopt), e.g. the schedule and why it
  // was chosen; nullopt where the backend does not say.
  virtual std::optional<std::string> plan(const Problem& /*problem*/) const { return std::nullopt; }
  // Called once before a run's cases, in the process that runs them: one-time
  // costs paid here (a compiler's lazy initialization, a JIT's first link) are
  // not charged to the first case's compile time.
  virtual void warmUp() {}
  // Compiles / dispatches / creates the primitive for `problem` on `operands`.
  // Throws nkbench::Error with a one-line message on failure.
  virtual std::unique_ptr<Kernel> prepare(const Problem& problem, const Operands& operands) = 0;
};

}  // namespace nkbench
