// One row of results: one (case, backend) pair of a run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/problem.h"
#include "reference/compare.h"

namespace nkbench {

struct ResultRow {
  std::string suite;
  std::string case_id;
  Problem problem;
  std::string isa;       // the run's cap
  std::string isa_used;  // the level the backend's code used, at or below isa; empty when not prepared
  std::string backend;
  int threads = 1;
  std::string register_block;
  // The schedule of a compiler backend (mlir) and where it came from: "analytic"
  // (the documented defaults), "tuned: FILE" or "--schedule"; empty for libraries.
  std::string schedule;
  std::string schedule_source;
  // mlir: whether the kernels came from the kernel cache ("hit"), were compiled
  // into it ("miss"), without one ("off"), or for one that could not store
  // them ("unstored"); empty for libraries.
  std::string kernel_cache;
  std::string implementation;
  std::string nanokernel;
  int repetitions = 0;
  double median_gflops = 0.0;
  double best_gflops = 0.0;
  double median_ms = 0.0;
  double best_ms = 0.0;
  double stddev_ms = 0.0;
  double iqr_ms = 0.0;                     // interquartile range of the call times
  bool noisy = false;                      // iqr_ms above the run's noise threshold of median_ms
  std::vector<double> samples_ms;          // per-call time of each repetition, in run order
  std::vector<std::int64_t> samples_iterations;  // calls timed in each repetition, as samples_ms
  double peak_fraction = 0.0;             // median GFLOPS / measured peak of the run's ISA
  std::optional<double> ratio_to_libxsmm;  // median GFLOPS / libxsmm's median GFLOPS, same run
  double compile_ms = 0.0;                 // compile + JIT, dispatch, or primitive creation
  double pack_ms = 0.0;                    // operand packing + unpacking of C, per call
  VerifyStatus status = VerifyStatus::Skipped;
  double max_error = 0.0;
  std::string note;                        // skip reason, error, or verification detail

  bool timed() const { return status == VerifyStatus::Passed; }
  // Verification ran and produced max_error (not for skipped or errored rows).
  bool verified() const {
    return status == VerifyStatus::Passed || status == VerifyStatus::Failed || status == VerifyStatus::Mistrusted;
  }
};

// Host and run description written beside the rows.
// The peaks of a multi-threaded run, over all its cores (harness/host/peak.h).
struct ThreadPeaks {
  double fp32_gflops = 0.0;
  double bf16_gflops = 0.0;  // 0 where the run has none (as bf16_peak_gflops)
};

struct RunMetadata {
  std::string suite;
  std::vector<std::string> selected_cases;  // ids after --filter, before --shard, in suite order
  std::string shard;                        // "I/N" (1-based); empty when not sharded
  std::string cpu_model;
  std::vector<std::string> isa_flags;
  double measured_clock_ghz = 0.0;
  double peak_gflops = 0.0;       // fp32 FMA peak of the run's ISA, one core
  // bf16 peak, one core: the dot product (vdpbf16ps), or the tiles (tdpbf16ps)
  // under --isa amx; 0 and empty below avx512-bf16 or without bf16 cases.
  double bf16_peak_gflops = 0.0;
  std::string bf16_peak_instruction;
  std::string isa;
  std::string compiler;
  std::map<std::string, std::string> library_versions;
  std::string git_commit;
  std::string date;          // ISO 8601, UTC
  std::string command_line;
  std::string hostname;
  int threads = 1;                  // the most threads any row used
  std::vector<int> thread_counts;   // every thread count the rows used; empty: {threads}
  // What the run was asked for, so that merge can tell which rows each case owes:
  // --threads (empty in older reports), and the selected cases that set their own.
  std::vector<int> requested_threads;
  std::map<std::string, int> case_threads;
  std::vector<int> cores;           // the cores of the most threads, thread i pinned to cores[i]
  std::map<int, ThreadPeaks> peaks_by_threads;  // counts above 1; one core: peak_gflops
  std::string fill;
  std::string cache = "hot";  // hot or cold (see RunOptions)
  std::string tuning = "none";  // the tuning file the mlir schedules came from, or none
  std::string schedule_option;  // --schedule, or none; empty in reports from before it was recorded
  // How rows were timed; 0 in reports from before they were recorded.
  int repetitions = 0;
  double min_time_s = 0.0;
  double noisy_iqr = 0.0;
  double cold_mib = 0.0;  // MiB the operand copies spanned under --cache cold; 0 under hot
};

}  // namespace nkbench
