// Result rows and run metadata shared by the report tests: one row of each status, awkward notes included.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/report/result_row.h"

namespace nkbench::test {

inline ResultRow passedRow() {
  ResultRow row;
  row.suite = "smoke";
  row.case_id = "brgemm-8x32x16-b2";
  row.problem = Problem{OpKind::Brgemm, DType::F32, DType::F32, 8, 32, 16, 2, true, {}};
  row.isa = "avx512";
  row.isa_used = "avx512";
  row.backend = "mlir-nanokernel";
  row.threads = 1;
  row.register_block = "8x32";
  row.implementation = "vector.fma";
  row.nanokernel = "brgemm_8x32_f32";
  row.repetitions = 15;
  row.median_gflops = 123.456;
  row.best_gflops = 130.0;
  row.median_ms = 0.000132456;
  row.best_ms = 0.00012;
  row.stddev_ms = 1.5e-6;
  row.iqr_ms = 2.5e-6;
  row.noisy = false;
  row.samples_ms = {0.000132456, 0.00012, 0.000135};
  row.samples_iterations = {754000, 812345, 740000};
  row.peak_fraction = 0.61234;
  row.ratio_to_libxsmm = 1.04567;
  row.compile_ms = 812.3456;
  row.pack_ms = 0.01234;
  row.status = VerifyStatus::Passed;
  row.max_error = 0.0;
  return row;
}

// Skipped, with a note full of characters that CSV must quote.
inline ResultRow skippedRow() {
  ResultRow row;
  row.suite = "smoke";
  row.case_id = "gemm-40x50x30";
  row.problem = Problem{OpKind::Gemm, DType::F32, DType::F32, 40, 50, 30, 1, false, {}};
  row.isa = "avx512";
  row.backend = "onednn";
  row.status = VerifyStatus::Skipped;
  row.note = "not built: \"dnnl\" missing, see cmake\nsecond line, with comma";
  return row;
}

inline ResultRow failedRow() {
  ResultRow row = passedRow();
  row.backend = "eigen";
  row.register_block.clear();
  row.ratio_to_libxsmm.reset();
  row.status = VerifyStatus::Failed;
  row.max_error = 3.14159e-3;
  row.note = "C[0,1] = 2 but the reference is 3";
  return row;
}

// A passed mlp row: 16 rows through widths 64, 96 and 32, with bias and ReLU.
inline ResultRow mlpRow() {
  ResultRow row = passedRow();
  row.case_id = "mlp-16x64-96-32";
  row.problem = Problem{OpKind::Mlp, DType::F32, DType::F32, 16, 32, 64, 1, false, {{64, 96, 32}, true, Activation::Relu}};
  row.backend = "eigen";
  row.register_block.clear();
  row.nanokernel.clear();
  row.implementation = "Eigen products per layer, bias+relu as passes over each output (compiled ISA: avx2+fma)";
  return row;
}

inline std::vector<ResultRow> sampleRows() {
  ResultRow other_suite = passedRow();
  other_suite.suite = "default";
  other_suite.ratio_to_libxsmm.reset();
  return {passedRow(), skippedRow(), failedRow(), other_suite};
}

inline RunMetadata sampleMetadata() {
  RunMetadata metadata;
  metadata.suite = "smoke";
  metadata.selected_cases = {"brgemm-8x32x16-b2", "gemm-40x50x30"};
  metadata.shard = "2/3";
  metadata.cpu_model = "Test CPU @ 3.0GHz";
  metadata.isa_flags = {"avx2", "fma", "avx512f"};
  metadata.measured_clock_ghz = 3.1;
  metadata.peak_gflops = 198.4;
  metadata.bf16_peak_gflops = 396.8;
  metadata.bf16_peak_instruction = "vdpbf16ps";
  metadata.isa = "avx512";
  metadata.compiler = "GNU 12.2.0";
  metadata.library_versions = {{"libxsmm", "1.17"}, {"onednn", "2.6.3"}};
  metadata.git_commit = "abc123";
  metadata.date = "2024-01-02T03:04:05Z";
  metadata.command_line = "/opt/nkbench run --suite smoke --shard 2/3";
  metadata.hostname = "host";
  metadata.threads = 1;
  metadata.fill = "exact";
  metadata.schedule_option = "none";
  metadata.repetitions = 5;
  metadata.min_time_s = 0.1;
  metadata.noisy_iqr = 0.05;
  return metadata;
}

// A fresh empty folder per test, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("nkbench-" + std::string(test->test_suite_name()) + "-" + test->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace nkbench::test
