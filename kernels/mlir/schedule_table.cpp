#include "harness/core/error.h"
#include "kernels/mlir/schedule.h"

#include <fmt/format.h>

namespace nkbench::mlir_backend {

std::string Schedule::registerBlock() const { return fmt::format("{}x{}", block_m, block_n); }

const std::vector<Schedule>& scheduleTable() {
  // Register blocks fill the vector register file with accumulators and leave
  // room for the B vectors and the A broadcast:
  //  AVX-512: 32 zmm; 8x32 f32 = 16 accumulators + 2 B loads + 1 broadcast.
  //  AVX2:    16 ymm; 4x16 f32 =  8 accumulators + 2 B loads + 1 broadcast.
  // 8 chains cover an FMA latency of 4 cycles on 2 FMA pipes (Zen 4/5, Intel since Skylake).
  static const std::vector<Schedule> table = {
      {"avx2.f32.4x16", Isa::Avx2, DType::F32, 4, 16, 8, {64, 64, 64}, 8},
      {"avx512.f32.8x32", Isa::Avx512, DType::F32, 8, 32, 16, {64, 64, 64}, 8},
  };
  return table;
}

const Schedule& selectSchedule(Isa isa, DType dtype) {
  const Schedule* best = nullptr;
  for (const Schedule& schedule : scheduleTable())
    if (schedule.dtype == dtype && schedule.isa <= isa && (!best || best->isa < schedule.isa))
      best = &schedule;
  if (!best)
    throw Error(fmt::format("mlir: no schedule for {} under --isa {}", toString(dtype), toString(isa)));
  return *best;
}

}  // namespace nkbench::mlir_backend
