#include "kernels/mlir/tuning/tuning_candidates.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "kernels/mlir/nanokernel_check.h"
#include "kernels/mlir/tuning/shape_class.h"
#include "kernels/mlir/vector/gemm_block_fit.h"
#include "kernels/mlir/vector/register_block_plan.h"

namespace nkbench::mlir_backend {
namespace {

constexpr double kFmaPorts = 2.0;
constexpr double kLoadPorts = 2.0;
constexpr double kFmaLatency = 4.0;
constexpr std::int64_t kMaxBlockRows = 16;
constexpr std::int64_t kMaxBlockVectors = 6;

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

double brgemmCycles(const Problem& p, const Schedule& schedule, const CacheSizes& caches) {
  const RegisterBlockPlan plan = planRegisterBlocks(p, schedule, caches);
  const std::int64_t k_steps = schedule.nanokernel == NanokernelKind::Bf16Dot ? ceilDiv(p.k, 2) : p.k;
  const double ways = double(std::max<std::int64_t>(1, plan.split.ways));
  // The widening route converts each B vector and each broadcast of A as it
  // loads them; with A widened when packed, only the B vectors.
  const bool widen_a = schedule.nanokernel == NanokernelKind::Bf16WidenFma;
  const bool widen_b = widensInRegisters(schedule.nanokernel);
  double cycles = 0;
  for (const RowBand& band : plan.bands)
    for (const ColumnPanel& panel : band.panels) {
      const double blocks = double(band.size / band.rows) * double(ceilDiv(panel.size, panel.cols));
      const double vectors = double(plan.blockVectors(panel));
      const double rows = double(band.rows);
      const double fmas = rows * vectors;
      const double loads = vectors + rows;
      const double widen_ops = (widen_b ? vectors : 0.0) + (widen_a ? rows : 0.0);
      const double step = std::max({(fmas + widen_ops) / kFmaPorts, loads / kLoadPorts, kFmaLatency / ways});
      cycles += blocks * (double(p.batch * k_steps) * step + 2 * fmas);  // + C in and out
    }
  return cycles;
}

// The families (schedule name prefixes) of each nanokernel the cap allows for
// `dtype`, the highest level of each; their first table entry stands for them.
std::vector<const Schedule*> familyBases(Isa isa, DType dtype) {
  const Isa cap = isa == Isa::AmxEmulated ? Isa::Avx512Bf16 : isa;
  std::vector<const Schedule*> bases;
  for (const Schedule& s : scheduleTable()) {
    if (s.dtype != dtype || s.isa > cap) continue;
    auto same_kind = std::find_if(bases.begin(), bases.end(),
                                  [&](const Schedule* b) { return b->nanokernel == s.nanokernel; });
    if (same_kind == bases.end())
      bases.push_back(&s);
    else if ((*same_kind)->isa < s.isa)
      *same_kind = &s;
  }
  return bases;
}

// The column width a GEMM's block calls take: the fitted block's, widened
// where that pads N less; a named block's as it is.
std::int64_t blockColumns(const Problem& gemm, const Schedule& schedule, const CacheSizes& caches,
                          const GemmBlocking& block) {
  const std::int64_t columns = std::min(gemm.n, block.bn);
  if (schedule.gemm_block_given) return columns;
  return leastPaddedWidth(gemm, schedule, caches, std::min(gemm.m, block.bm), columns);
}

// The BRGEMM a GEMM's block calls solve (its schedule's GEMM block fitted to
// L2, at most the GEMM, its columns widened as they run), batch = K blocks; a
// BRGEMM as it is.
Problem blockKernelOf(const Problem& p, const Schedule& schedule, const CacheSizes& caches) {
  if (p.kind == OpKind::Brgemm) return p;
  const GemmBlocking block = fittedGemmBlock(p, schedule, caches);
  Problem brgemm = p;
  brgemm.kind = OpKind::Brgemm;
  brgemm.m = std::min(p.m, block.bm);
  brgemm.n = blockColumns(p, schedule, caches, block);
  brgemm.k = std::min(p.k, block.bk);
  brgemm.batch = ceilDiv(p.k, brgemm.k);
  brgemm.accumulate = false;
  return brgemm;
}

}  // namespace

double estimatedCycles(const Problem& p, const Schedule& schedule, const CacheSizes& caches) {
  if (p.kind == OpKind::Brgemm) return brgemmCycles(p, schedule, caches);
  const Problem brgemm = blockKernelOf(p, schedule, caches);
  if (schedule.nanokernel == NanokernelKind::AmxTile)  // edge blocks padded to whole ones
    return double(ceilDiv(p.m, brgemm.m) * ceilDiv(p.n, brgemm.n)) * brgemmCycles(brgemm, schedule, caches);
  // Whole blocks, and the edge blocks' kernels of their own extent.
  const auto cycles = [&](std::int64_t rows, std::int64_t columns) {
    Problem block = brgemm;
    block.m = rows;
    block.n = columns;
    return brgemmCycles(block, schedule, caches);
  };
  const std::int64_t whole_m = p.m / brgemm.m, rest_m = p.m % brgemm.m;
  const std::int64_t whole_n = p.n / brgemm.n, rest_n = p.n % brgemm.n;
  double total = double(whole_m * whole_n) * cycles(brgemm.m, brgemm.n);
  if (rest_m > 0) total += double(whole_n) * cycles(rest_m, brgemm.n);
  if (rest_n > 0) total += double(whole_m) * cycles(brgemm.m, rest_n);
  if (rest_m > 0 && rest_n > 0) total += cycles(rest_m, rest_n);
  return total;
}

std::vector<std::string> registerBlockCandidates(Isa isa, const std::vector<Problem>& problems,
                                                 const CacheSizes& caches, std::size_t count) {
  if (problems.empty()) return {};
  const DType dtype = problems.front().dtype;
  std::vector<std::string> names = {selectSchedule(isa, dtype).name};
  std::vector<std::pair<double, std::string>> ranked;
  for (const Schedule* base : familyBases(isa, dtype)) {
    if (base->nanokernel == NanokernelKind::AmxTile) {
      for (const Schedule& s : scheduleTable())
        if (s.nanokernel == NanokernelKind::AmxTile && s.name != names.front()) names.push_back(s.name);
      continue;
    }
    for (std::int64_t vectors = 1; vectors <= kMaxBlockVectors; ++vectors)
      for (std::int64_t rows = 1; rows <= kMaxBlockRows; ++rows) {
        Schedule s = *base;
        s.block_m = rows;
        s.block_n = vectors * base->vector_lanes;
        if (registerBlockProblem(s)) continue;
        double cycles = 0;
        for (const Problem& p : problems) cycles += std::log(estimatedCycles(p, s, caches));
        ranked.emplace_back(cycles, scheduleSpecName(*base, rows, s.block_n));
      }
  }
  std::stable_sort(ranked.begin(), ranked.end());
  const std::size_t wanted = names.size() + count;
  auto add = [&](const std::string& name) {
    if (names.size() < wanted && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  // Each family's best first, so that every nanokernel kind is measured; then by estimate.
  for (const Schedule* base : familyBases(isa, dtype)) {
    const std::string family = scheduleSpecName(*base, 1, 1);
    const std::string prefix = family.substr(0, family.size() - 3);  // "FAMILY."
    for (const auto& [cycles, name] : ranked)
      if (name.rfind(prefix, 0) == 0) {
        add(name);
        break;
      }
  }
  for (const auto& [cycles, name] : ranked) add(name);
  return names;
}

std::vector<std::string> settingCandidates(const std::string& name, const std::vector<Problem>& problems,
                                           const CacheSizes& caches) {
  const Schedule leader = parseScheduleSpec(name);
  if (leader.nanokernel == NanokernelKind::AmxTile) return {};
  const Schedule base = parseScheduleSpec(name.substr(0, name.find(':')));
  ScheduleSettings current;
  if (name.find(":gemm=") != std::string::npos) current.gemm_block = leader.gemm_block;
  current.edge_rows = leader.edge_rows;
  current.prefetch_distance = leader.prefetch_distance;
  // What a kernel of `s` looks like on each problem: its blocks and prefetch.
  auto kernels = [&](const Schedule& s) {
    std::vector<std::string> shapes;
    for (const Problem& p : problems) {
      const RegisterBlockPlan plan = planRegisterBlocks(blockKernelOf(p, s, caches), s, caches);
      shapes.push_back(describeRegisterBlocks(plan) + "/" + std::to_string(plan.prefetch_distance) + "/" +
                       std::to_string(plan.prefetch_ahead_fmas));
    }
    return shapes;
  };
  const std::vector<std::string> as_is = kernels(leader);
  const bool spills_l2 = std::any_of(problems.begin(), problems.end(), [&](const Problem& p) {
    return shapeClassOf(p, caches).ends_with(" mem");
  });
  std::vector<ScheduleSettings> variants;
  for (EdgeRows rows : {EdgeRows::ShortBand, EdgeRows::Balanced}) {
    ScheduleSettings variant = current;
    variant.edge_rows = rows;
    variants.push_back(variant);
  }
  if (spills_l2)
    for (std::int64_t distance : {0, 1, 2, 4}) {
      ScheduleSettings variant = current;
      variant.prefetch_distance = distance;
      variants.push_back(variant);
    }
  std::vector<std::string> names;
  for (const ScheduleSettings& variant : variants) {
    const std::string candidate = scheduleSpecName(base, leader.block_m, leader.block_n, variant);
    if (candidate == name || std::find(names.begin(), names.end(), candidate) != names.end()) continue;
    if (kernels(parseScheduleSpec(candidate)) != as_is) names.push_back(candidate);
  }
  return names;
}

std::vector<std::string> gemmBlockCandidates(const std::string& name, const Problem& largest,
                                             const CacheSizes& caches) {
  const Schedule s = parseScheduleSpec(name);
  if (s.nanokernel == NanokernelKind::AmxTile) return {name};
  const std::string family_name = name.substr(0, name.find(':'));
  const Schedule base = parseScheduleSpec(family_name);
  auto whole = [](std::int64_t value, std::int64_t multiple) { return std::max(multiple, value / multiple * multiple); };
  // Around the block the name runs on the largest case: a named block would
  // otherwise time the same kernel again under another name.
  const GemmBlocking g = fittedGemmBlock(largest, s, caches);
  std::vector<GemmBlocking> blocks = {g};
  for (const GemmBlocking& b : {GemmBlocking{g.bm * 2, g.bn, g.bk}, GemmBlocking{g.bm / 2, g.bn, g.bk},
                                GemmBlocking{g.bm, g.bn * 2, g.bk}, GemmBlocking{g.bm, g.bn, g.bk * 2},
                                GemmBlocking{g.bm, g.bn, g.bk / 2}})
    blocks.push_back({whole(b.bm, s.block_m), whole(b.bn, s.block_n), std::max<std::int64_t>(16, b.bk)});
  std::vector<std::string> names;
  for (const GemmBlocking& b : blocks) {
    const std::string candidate = scheduleSpecName(base, s.block_m, s.block_n, b);
    if (std::find(names.begin(), names.end(), candidate) == names.end()) names.push_back(candidate);
  }
  // The leader runs the fitted block unless its columns widen: then that
  // block, named, is a kernel of its own.
  if (blockColumns(largest, s, caches, g) == std::min(largest.n, g.bn))
    names.front() = name;
  else
    names.insert(names.begin(), name);
  return names;
}

}  // namespace nkbench::mlir_backend
