#include "kernels/registry.h"

#include <fmt/format.h>

#include <functional>

#include "harness/core/error.h"
#include "kernels/eigen/eigen_backend.h"
#include "kernels/faulty/faulty_backend.h"
#include "kernels/libxsmm/libxsmm_backend.h"
#include "kernels/mlir/mlir_backend.h"
#include "kernels/onednn/onednn_backend.h"

namespace nkbench {
namespace {

struct Factory {
  BackendEntry entry;
  std::function<std::unique_ptr<Backend>(const BackendConfig&)> create;
  bool by_default = true;  // among the backends `all` runs
};

// Default report order: the compiler under test first, then its ablation, then the libraries.
const std::vector<Factory>& factories() {
  static const std::vector<Factory> all = {
      {{"mlir", "MLIR 22 nanokernel compiler (x86vector broadcast+FMA)"}, makeMlirBackend},
      {{"mlir-default", "same payload and tiling, upstream generic vector lowering"}, makeMlirDefaultBackend},
      {{"libxsmm", "libxsmm 1.17 JIT (BRGEMM, GEMM over blocks)"}, makeLibxsmmBackend},
      {{"onednn", "oneDNN matmul primitive, plain weights"},
       [](const BackendConfig& c) { return makeOnednnBackend(c, false); }},
      {{"onednn-packed", "oneDNN matmul primitive, blocked weights (reorder as packing)"},
       [](const BackendConfig& c) { return makeOnednnBackend(c, true); }},
      {{"eigen", "Eigen 3.4 GEMM (batch as a loop)"}, makeEigenBackend},
      {{"faulty", "test only: goes wrong on purpose as NKBENCH_FAULTY says (not run by default)"},
       makeFaultyBackend, false},
  };
  return all;
}

}  // namespace

std::vector<BackendEntry> knownBackends() {
  std::vector<BackendEntry> entries;
  for (const Factory& f : factories()) entries.push_back(f.entry);
  return entries;
}

std::vector<std::string> defaultBackendNames() {
  std::vector<std::string> names;
  for (const Factory& f : factories())
    if (f.by_default) names.push_back(f.entry.name);
  return names;
}

std::unique_ptr<Backend> createBackend(const std::string& name, const BackendConfig& config) {
  for (const Factory& f : factories()) {
    if (f.entry.name != name) continue;
    return f.create(config);
  }
  std::string known;
  for (const Factory& f : factories()) known += (known.empty() ? "" : ", ") + f.entry.name;
  throw Error(fmt::format("unknown backend '{}' (known: {})", name, known));
}

}  // namespace nkbench
