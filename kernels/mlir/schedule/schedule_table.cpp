#include "harness/core/error.h"
#include "kernels/mlir/schedule/schedule.h"

#include <fmt/format.h>

namespace nkbench::mlir_backend {

std::string Schedule::registerBlock() const { return fmt::format("{}x{}", block_m, block_n); }

const std::vector<Schedule>& scheduleTable() {
  // Register blocks fill the vector register file with accumulators and leave
  // room for the B vectors and the A broadcast:
  //  AVX-512: 32 zmm; 8x32 f32 = 16 accumulators + 2 B loads + 1 broadcast.
  //  AVX2:    16 ymm; 6x16 f32 = 12 accumulators + 2 B loads + 1 broadcast (BLIS's
  //           haswell block); 4x16 = 8 accumulators, exactly the chains FMA latency
  //           needs, measured 0.88x libxsmm against 0.99x for 6x16 on 32^3..512^3.
  // 8 chains cover an FMA latency of 4 cycles on 2 FMA pipes (Zen 4/5, Intel since Skylake).
  // GEMM cache blocks are one register block wide (wider only where that pads a
  // ragged N less: vector/gemm_block_fit.h), so that each B strip is contiguous
  // and streams well from L3 (64x64x64 blocks measured 0.84-0.95x libxsmm on the
  // paper GEMMs, 64x32x128 0.97-1.04x), and deep in K to amortise C.
  // The first entry of each ISA level is its default; the others are chosen with --schedule.
  static const std::vector<Schedule> table = {
      {"avx2.f32.6x16", Isa::Avx2, DType::F32, 6, 16, 8, {96, 16, 128}, 8, NanokernelKind::Fma},
      {"avx2.f32.4x16", Isa::Avx2, DType::F32, 4, 16, 8, {96, 16, 128}, 8, NanokernelKind::Fma},
      {"avx512.f32.8x32", Isa::Avx512, DType::F32, 8, 32, 16, {64, 32, 128}, 8, NanokernelKind::Fma},
      // bf16 without avx512-bf16, and where vdpbf16ps is slower than f32 FMAs (see
      // route_choice.h): A widened to f32 once, when packed, B widened in
      // registers (a 16-bit shift, no AVX-NE-CONVERT needed), then the f32 FMA
      // nanokernels and register blocks. Measured on the Zen 5 VM against
      // widening A in registers too (-widen): 1.12-1.49x under --isa avx512,
      // 1.26-2.0x under avx2 (default suite's bf16 cases).
      {"avx2.bf16-f32a.6x16", Isa::Avx2, DType::BF16, 6, 16, 8, {96, 16, 128}, 8, NanokernelKind::Bf16F32AFma},
      {"avx512.bf16-f32a.8x32", Isa::Avx512, DType::BF16, 8, 32, 16, {64, 32, 128}, 8, NanokernelKind::Bf16F32AFma},
      {"avx2.bf16-widen.6x16", Isa::Avx2, DType::BF16, 6, 16, 8, {96, 16, 128}, 8, NanokernelKind::Bf16WidenFma},
      {"avx512.bf16-widen.8x32", Isa::Avx512, DType::BF16, 8, 32, 16, {64, 32, 128}, 8, NanokernelKind::Bf16WidenFma},
      // bf16 pairs into f32 lanes: 16 vdpbf16ps accumulators, each step consumes two K.
      {"avx512bf16.bf16.8x32", Isa::Avx512Bf16, DType::BF16, 8, 32, 16, {64, 32, 128}, 8, NanokernelKind::Bf16Dot},
      // AMX: blocks of C tiles of 16x16 f32, each K step loading one A tile per tile
      // row and one B tile per tile column; all must fit the 8 tmm registers
      // (amxTileRegisters). 2x2 (4 C + 2 A + 2 B) reuses every loaded tile twice;
      // 1x3 and 3x1 (7 registers) suit 16- and 48-wide shapes. "lanes" are a
      // tile's columns. Each tile step consumes 32 K. The prefetch rule has not
      // been measured on AMX yet: -noprefetch is the same kernel without it, to compare.
      // GEMM blocks on the tile route (kernel_problem.h, gemmBlockingFor): the
      // gemm_block's rows and K (one block call reduces over all of K, C in
      // tiles throughout), its columns widened until a B panel takes a quarter
      // of L2, N blocks outer so that the panel stays there across the M blocks.
      {"amx.bf16.32x32", Isa::Amx, DType::BF16, 32, 32, 16, {64, 64, 256}, 4, NanokernelKind::AmxTile},
      {"amx.bf16.16x48", Isa::Amx, DType::BF16, 16, 48, 16, {64, 96, 256}, 3, NanokernelKind::AmxTile},
      {"amx.bf16.48x16", Isa::Amx, DType::BF16, 48, 16, 16, {96, 64, 256}, 3, NanokernelKind::AmxTile},
      {"amx.bf16.32x32-noprefetch", Isa::Amx, DType::BF16, 32, 32, 16, {64, 64, 256}, 4, NanokernelKind::AmxTile,
       0},
  };
  return table;
}

std::string scheduleNames() {
  std::string names;
  for (const Schedule& schedule : scheduleTable()) names += (names.empty() ? "" : ", ") + schedule.name;
  return names;
}

const Schedule* findSchedule(const std::string& name) {
  for (const Schedule& schedule : scheduleTable())
    if (schedule.name == name) return &schedule;
  return nullptr;
}

namespace {
// amx-emulated runs the AMX schedules (as vector code).
Isa scheduleCap(Isa isa) { return isa == Isa::AmxEmulated ? Isa::Amx : isa; }
}  // namespace

Schedule selectSchedule(Isa isa, DType dtype, const std::string& name, const std::string& origin) {
  if (!name.empty()) {
    const Schedule schedule = parseScheduleSpec(name, origin);
    const std::string named = origin.empty() ? "--schedule " + name : origin;
    if (schedule.dtype != dtype)
      throw Error(fmt::format("{} is for {}, not {}", named, toString(schedule.dtype), toString(dtype)));
    if (schedule.isa > scheduleCap(isa))
      throw Error(fmt::format("{} needs {}, above --isa {}", named, toString(schedule.isa), toString(isa)));
    return schedule;
  }
  const Schedule* best = nullptr;
  for (const Schedule& schedule : scheduleTable())
    if (schedule.dtype == dtype && schedule.isa <= scheduleCap(isa) && (!best || best->isa < schedule.isa)) best = &schedule;
  if (!best) throw Error(fmt::format("mlir: no schedule for {} under --isa {}", toString(dtype), toString(isa)));
  return *best;
}

}  // namespace nkbench::mlir_backend
