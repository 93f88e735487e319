// One case of a run on its backends: data and reference, then per backend
// compile (prepare) and verify, then timed repetitions interleaved across the
// verified kernels. The runner calls it in process or in a child process
// (isolated_case.h); each stage is announced first, so that whoever watches
// knows which backend was at which stage when something went wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/isa.h"
#include "harness/report/result_row.h"
#include "harness/run/runner.h"
#include "harness/suite/suite.h"
#include "kernels/backend.h"

namespace nkbench {

enum class CaseStage { PreparingData, Compiling, Verifying, Timing };
std::string_view toString(CaseStage stage);  // "preparing the data", "compiling", "verifying", "timing"

// What every case of a run shares.
struct CaseSettings {
  std::string suite;
  Isa isa = Isa::Avx2;
  int threads = 1;
  const RunOptions* options = nullptr;  // fill, timing, cache, noise threshold
  double fp32_peak_gflops = 0.0;
  double bf16_peak_gflops = 0.0;        // 0: bf16 rows are judged against the fp32 peak
  std::int64_t cold_rotation_bytes = 0;
};

// Called before each stage: the backend's index among the case's backends
// (kNoBackend while preparing the data) and its row as known so far.
inline constexpr std::size_t kNoBackend = static_cast<std::size_t>(-1);
using StageObserver = std::function<void(std::size_t backend, CaseStage stage, const ResultRow& row)>;

// Each backend's warmUp(); one that fails is left to its cases to report.
void warmUpBackends(const std::vector<Backend*>& backends);

// A row for `backend` on `c` with nothing measured yet.
ResultRow blankRow(const CaseSettings& settings, const SuiteCase& c, const std::string& backend);

// The case's rows, one per backend in order. A backend that throws gets an
// error row; nothing here survives a crash of a kernel (isolated_case.h does).
std::vector<ResultRow> runCase(const SuiteCase& c, const std::vector<Backend*>& backends, const CaseSettings& settings,
                               const StageObserver& observe);

}  // namespace nkbench
