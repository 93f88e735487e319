// Schedules beyond the table: a family's register block and GEMM block written
// out in the schedule's name, so that `--schedule`, the tuner and tuning files
// can name any block the register file holds, not only the table's.
#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "harness/core/error.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/schedule/schedule.h"

namespace nkbench::mlir_backend {
namespace {

// "avx512.f32" of "avx512.f32.8x32-noprefetch".
std::string familyOf(const std::string& name) {
  const std::size_t last_dot = name.rfind('.');
  return last_dot == std::string::npos ? "" : name.substr(0, last_dot);
}

// The family's first table entry: its ISA, type, lanes and nanokernel are the family's.
const Schedule* familyBase(const std::string& family) {
  for (const Schedule& schedule : scheduleTable())
    if (familyOf(schedule.name) == family) return &schedule;
  return nullptr;
}

std::string families() {
  std::string list;
  for (const Schedule& schedule : scheduleTable()) {
    const std::string family = familyOf(schedule.name);
    if (familyBase(family) == &schedule) list += (list.empty() ? "" : ", ") + family;
  }
  return list;
}

// A positive decimal number without sign or leading zeros, or nullopt.
std::optional<std::int64_t> readCount(std::string_view text) {
  if (text.empty() || text.size() > 6 || text[0] < '1' || text[0] > '9') return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "AxB" or "AxBxC" as counts; nullopt unless exactly `parts` positive counts.
std::optional<std::vector<std::int64_t>> readDims(std::string_view text, std::size_t parts) {
  std::vector<std::int64_t> dims;
  while (true) {
    const std::size_t x = text.find('x');
    const std::optional<std::int64_t> dim = readCount(text.substr(0, x));
    if (!dim) return std::nullopt;
    dims.push_back(*dim);
    if (x == std::string_view::npos) break;
    text.remove_prefix(x + 1);
  }
  if (dims.size() != parts) return std::nullopt;
  return dims;
}

// Batch entries ahead a name may ask to prefetch.
constexpr std::int64_t kMaxPrefetchSetting = 64;

}  // namespace

std::int64_t vectorRegisters(Isa isa) { return isa >= Isa::Avx512 ? 32 : 16; }

std::optional<std::string> registerBlockProblem(const Schedule& s) {
  if (s.block_m < 1 || s.block_n < 1) return "the register block needs rows and columns";
  if (s.nanokernel == NanokernelKind::AmxTile) {
    if (s.block_m % kAmxTileRows != 0 || s.block_n % kAmxTileCols != 0)
      return fmt::format("{}x{} is not whole {}x{} tiles", s.block_m, s.block_n, kAmxTileRows, kAmxTileCols);
    const std::int64_t tiles = amxTileRegisters(s.block_m / kAmxTileRows, s.block_n / kAmxTileCols);
    if (tiles > kAmxTileRegisters)
      return fmt::format("{}x{} needs {} tile registers (C, A and B), above the {} there are", s.block_m, s.block_n,
                         tiles, kAmxTileRegisters);
    return std::nullopt;
  }
  if (s.block_n % s.vector_lanes != 0)
    return fmt::format("{} columns are not whole vectors of {} lanes", s.block_n, s.vector_lanes);
  // Accumulators, the block's B vectors of one step, and the broadcast of A.
  const std::int64_t vectors = s.block_n / s.vector_lanes;
  const std::int64_t needed = s.block_m * vectors + vectors + 1;
  if (needed > vectorRegisters(s.isa))
    return fmt::format("{}x{} needs {} vector registers ({} accumulators, {} B vectors, 1 broadcast), above the {} "
                       "of {}",
                       s.block_m, s.block_n, needed, s.block_m * vectors, vectors, vectorRegisters(s.isa),
                       toString(s.isa));
  return std::nullopt;
}

std::string scheduleSpecName(const Schedule& base, std::int64_t block_m, std::int64_t block_n,
                             const ScheduleSettings& settings) {
  std::string name = fmt::format("{}.{}x{}", familyOf(base.name), block_m, block_n);
  if (const auto& g = settings.gemm_block) name += fmt::format(":gemm={}x{}x{}", g->bm, g->bn, g->bk);
  if (settings.edge_rows != EdgeRows::Auto)
    name += settings.edge_rows == EdgeRows::ShortBand ? ":rows=short" : ":rows=balanced";
  if (settings.prefetch_distance != kAutoPrefetch) name += fmt::format(":prefetch={}", settings.prefetch_distance);
  if (settings.separate_epilogue) name += ":epilogue=separate";
  return name;
}

std::string scheduleSpecName(const Schedule& base, std::int64_t block_m, std::int64_t block_n,
                             const std::optional<GemmBlocking>& gemm_block) {
  return scheduleSpecName(base, block_m, block_n, ScheduleSettings{gemm_block});
}

Schedule parseScheduleSpec(const std::string& spec, const std::string& origin) {
  if (const Schedule* entry = findSchedule(spec)) return *entry;
  auto bad = [&](const std::string& why) {
    return Error(fmt::format("{}: {}", origin.empty() ? "--schedule " + spec : origin, why));
  };
  const std::size_t colon = spec.find(':');
  const std::string block_part = spec.substr(0, colon);
  const std::string family = familyOf(block_part);
  const Schedule* base = familyBase(family);
  if (!base)
    throw bad(fmt::format("unknown (known: {}; or FAMILY.MxN[:gemm=BMxBNxBK][:rows=short|balanced][:prefetch=D]"
                          "[:epilogue=separate] of the families {})",
                          scheduleNames(), families()));
  const auto block = readDims(std::string_view(block_part).substr(family.size() + 1), 2);
  if (!block) throw bad("the register block is not MxN in positive numbers");
  Schedule schedule = *base;
  schedule.block_m = (*block)[0];
  schedule.block_n = (*block)[1];
  ScheduleSettings settings;
  std::string_view modifiers = colon == std::string::npos ? std::string_view() : std::string_view(spec).substr(colon + 1);
  while (!modifiers.empty()) {
    const std::size_t next = modifiers.find(':');
    const std::string_view modifier = modifiers.substr(0, next);
    modifiers = next == std::string_view::npos ? std::string_view() : modifiers.substr(next + 1);
    const std::size_t equals = modifier.find('=');
    const std::string_view key = modifier.substr(0, equals);
    const std::string_view value = equals == std::string_view::npos ? std::string_view() : modifier.substr(equals + 1);
    if (key == "gemm") {
      const auto dims = readDims(value, 3);
      if (!dims) throw bad("the GEMM block is not BMxBNxBK in positive numbers");
      settings.gemm_block = GemmBlocking{(*dims)[0], (*dims)[1], (*dims)[2]};
      if (settings.gemm_block->bm % schedule.block_m != 0 || settings.gemm_block->bn % schedule.block_n != 0)
        throw bad(fmt::format("the GEMM block's rows and columns must be whole {}x{} register blocks",
                              schedule.block_m, schedule.block_n));
      schedule.gemm_block = *settings.gemm_block;
      schedule.gemm_block_given = true;
    } else if (key == "rows" && (value == "short" || value == "balanced")) {
      if (schedule.nanokernel == NanokernelKind::AmxTile) throw bad("rows=: the tile route has no vector edge rows");
      settings.edge_rows = value == "short" ? EdgeRows::ShortBand : EdgeRows::Balanced;
      schedule.edge_rows = settings.edge_rows;
    } else if (key == "prefetch") {
      const std::optional<std::int64_t> distance = value == "0" ? std::optional<std::int64_t>(0) : readCount(value);
      if (!distance || *distance > kMaxPrefetchSetting) throw bad(fmt::format("prefetch=: 0 to {}", kMaxPrefetchSetting));
      settings.prefetch_distance = *distance;
      schedule.prefetch_distance = *distance;
    } else if (key == "epilogue" && value == "separate") {
      if (schedule.nanokernel == NanokernelKind::AmxTile)
        throw bad("epilogue=: separate passes take f32 mlps, and the tile route is bf16 only");
      settings.separate_epilogue = true;
      schedule.fused_epilogue = false;
    } else {
      throw bad("the modifiers are :gemm=BMxBNxBK, :rows=short|balanced, :prefetch=D and :epilogue=separate, in that "
                "order");
    }
  }
  if (auto problem = registerBlockProblem(schedule)) throw bad(*problem);
  schedule.name = scheduleSpecName(*base, schedule.block_m, schedule.block_n, settings);
  // One spelling per schedule, so that names compare as schedules do.
  if (schedule.name != spec) throw bad(fmt::format("write it as {}", schedule.name));
  return schedule;
}

}  // namespace nkbench::mlir_backend
