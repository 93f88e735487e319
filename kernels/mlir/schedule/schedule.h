// Nanokernel schedules: one per target ISA and element type, kept as data in
// schedule_table.cpp so that a register block is a parameter, not a buried constant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/isa.h"
#include "harness/core/problem.h"
#include "operands/packing.h"

namespace nkbench::mlir_backend {

// The nanokernel a schedule composes.
enum class NanokernelKind {
  Fma,           // f32: broadcast + vfmadd
  Bf16Dot,       // bf16: broadcast of a pair + vdpbf16ps on VNNI-packed B (avx512-bf16)
  Bf16WidenFma,  // bf16 widened to f32 in registers (shift), then broadcast + vfmadd
  // bf16 A widened to f32 once, when the operands are packed; B widened in
  // registers as on Bf16WidenFma. The broadcasts of A are then plain f32 ones,
  // folded into the FMAs: bound by the FMA ports where vdpbf16ps is slow.
  Bf16F32AFma,
  AmxTile,       // bf16: tdpbf16ps on 16x16 f32 C tiles kept in tmm registers (amx/amx_payload_ir.h)
};

// The routes that widen bf16 to f32 in the kernel's registers.
constexpr bool widensInRegisters(NanokernelKind kind) {
  return kind == NanokernelKind::Bf16WidenFma || kind == NanokernelKind::Bf16F32AFma;
}

// Whether the kernel reads A packed in f32: f32 problems, and bf16 on the
// route that widens A once, when packing (the payload's A and the L2 fit agree).
constexpr bool readsAInF32(DType dtype, NanokernelKind kind) {
  return dtype == DType::F32 || kind == NanokernelKind::Bf16F32AFma;
}

// How rows that whole register blocks leave over are covered (vector routes
// with edges, see register_block_plan.h).
enum class EdgeRows {
  Auto,       // a short band where it keeps enough FMA chains, else balanced bands
  ShortBand,  // whole blocks, then one short band of wider blocks
  Balanced,   // bands as even as they come, as tall as the registers allow
};

inline constexpr std::int64_t kAutoPrefetch = -1;

struct Schedule {
  std::string name;           // e.g. "avx512.f32.8x32"
  Isa isa;                    // lowest ISA level the schedule needs
  DType dtype;
  std::int64_t block_m;       // register block rows (one broadcast of A each)
  std::int64_t block_n;       // register block columns (block_n / vector_lanes vectors per row)
  std::int64_t vector_lanes;  // accumulator (C) elements per vector register
  GemmBlocking gemm_block;    // preferred cache block when GEMM runs as BRGEMM calls
  // Independent FMA chains needed to hide FMA latency (latency x FMA pipes).
  // Blocks with fewer accumulators split the reduction into partial sums.
  std::int64_t min_accumulators;
  NanokernelKind nanokernel = NanokernelKind::Fma;
  // Batch entries ahead the kernel prefetches A and B from: kAutoPrefetch (the
  // plan's rule, register_block_plan.h), 0 (none) or a count. Vector routes:
  // vector/buffer_rewrites/batch_prefetch.h. AMX: the next entry's tiles, where the blocks
  // stream from L2 (amxPrefetchesNextBatchEntry), unless 0.
  std::int64_t prefetch_distance = kAutoPrefetch;
  EdgeRows edge_rows = EdgeRows::Auto;
  // mlp layers: bias and activation fused into the block kernel's stores of C
  // (fused_epilogue.h), or, for comparison, applied after each layer by two
  // passes over its whole output, bias then activation (`:epilogue=separate`).
  bool fused_epilogue = true;
  // The GEMM block was named (`:gemm=`): used as given, not fitted to the host's
  // L2 (vector/gemm_block_fit.h).
  bool gemm_block_given = false;

  std::int64_t accumulators() const { return block_m * (block_n / vector_lanes); }
  bool bInVnniPairs() const { return nanokernel == NanokernelKind::Bf16Dot || nanokernel == NanokernelKind::AmxTile; }
  std::string registerBlock() const;  // "8x32"
};

const std::vector<Schedule>& scheduleTable();

// The schedule for `dtype` under ISA cap `isa`. Without a name: the first table
// entry of the highest ISA level <= `isa`. With a name: that schedule
// (parseScheduleSpec), which must be for `dtype` and within the cap. Throws
// nkbench::Error naming the problem otherwise, and the name as `origin` says
// where it came from (empty: "--schedule NAME").
Schedule selectSchedule(Isa isa, DType dtype, const std::string& name = "", const std::string& origin = "");

// The table entry called `name`, or nullptr.
const Schedule* findSchedule(const std::string& name);

// A table entry, or a schedule of a table family with its own blocks and
// settings: "FAMILY.MxN[:gemm=BMxBNxBK][:rows=short|balanced][:prefetch=D][:epilogue=separate]",
// e.g. "avx512.f32.12x32:gemm=96x64x256:prefetch=2" (the family's first entry
// with that register block, GEMM block, form of the rows register blocks leave
// over (EdgeRows; vector routes), batch prefetch distance D, 0 for none, and
// for mlp cases the epilogue as separate passes (Schedule::fused_epilogue)).
// The blocks must fit (registerBlockProblem), and the name be written as the
// schedule's own name spells it. Throws nkbench::Error naming the problem, and
// the spec as `origin` (empty: "--schedule SPEC").
Schedule parseScheduleSpec(const std::string& spec, const std::string& origin = "");

// What a name sets beyond the family's register block; unset: the family's.
struct ScheduleSettings {
  std::optional<GemmBlocking> gemm_block;
  EdgeRows edge_rows = EdgeRows::Auto;
  std::int64_t prefetch_distance = kAutoPrefetch;
  bool separate_epilogue = false;
};

// The name parseScheduleSpec reads back as `base`'s family with these blocks and settings.
std::string scheduleSpecName(const Schedule& base, std::int64_t block_m, std::int64_t block_n,
                             const ScheduleSettings& settings = {});
std::string scheduleSpecName(const Schedule& base, std::int64_t block_m, std::int64_t block_n,
                             const std::optional<GemmBlocking>& gemm_block);

// Why the schedule's register block does not fit the register file (vector
// registers for accumulators, one step's B vectors and a broadcast; tile
// registers for C, A and B tiles), or nullopt when it fits.
std::optional<std::string> registerBlockProblem(const Schedule& schedule);

// Vector registers of a level: 16 ymm below AVX-512, 32 zmm from it.
std::int64_t vectorRegisters(Isa isa);

// "avx2.f32.6x16, avx2.f32.4x16, ...", for messages and --help.
std::string scheduleNames();

}  // namespace nkbench::mlir_backend
