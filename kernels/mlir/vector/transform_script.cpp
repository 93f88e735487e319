#include "kernels/mlir/vector/transform_script.h"

#include "kernels/mlir/vector/rewrites/edge_masks.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "kernels/mlir/vector/rewrites/zero_fills.h"

#include <fmt/format.h>

#include <vector>

namespace nkbench::mlir_backend {
namespace {

constexpr const char* kAny = "!transform.any_op";
constexpr const char* kTileSequence = "nk_tile";
constexpr const char* kComposeSequence = "nk_compose";

// Emits transform IR line by line with fresh SSA names.
class ScriptWriter {
 public:
  std::string fresh(const std::string& stem) { return fmt::format("%{}{}", stem, next_id_++); }
  void line(const std::string& text) { body_ += "    " + text + "\n"; }
  // Closes the lines written so far as the named sequence `name`; the next lines start another.
  void endSequence(const std::string& name, const std::string& comment) {
    sequences_ += fmt::format(
        "  // {}\n"
        "  transform.named_sequence @{}(%root: {} {{transform.readonly}}) {{\n"
        "{}"
        "    transform.yield\n"
        "  }}\n",
        comment, name, kAny, body_);
    body_.clear();
  }
  std::string module() const {
    return "module attributes {transform.with_named_sequence} {\n" + sequences_ + "}\n";
  }

  // Splits `op` along iteration dimension `dim` after `chunk`; returns {lower, upper}.
  std::pair<std::string, std::string> split(const std::string& op, int dim, std::int64_t chunk) {
    const std::string parts = fresh("parts");
    const std::string lower = fresh("lower");
    const std::string upper = fresh("upper");
    line(fmt::format("{} = transform.structured.split {} after {} {{dimension = {}}} : {}", parts, op, chunk, dim, kAny));
    line(fmt::format("{}, {} = transform.split_handle {} : ({}) -> ({}, {})", lower, upper, parts, kAny, kAny, kAny));
    return {lower, upper};
  }

  // Tiles `op` with `sizes` (batch, m, n, k); returns the tiled op and one loop per non-zero size.
  std::pair<std::string, std::vector<std::string>> tile(const std::string& op, const std::vector<std::int64_t>& sizes,
                                                        bool fuse_producers) {
    std::vector<std::string> loops;
    for (std::int64_t size : sizes)
      if (size != 0) loops.push_back(fresh("loop"));
    const std::string tiled = fresh("tiled");
    std::string results = tiled;
    std::string result_types = kAny;
    for (const std::string& loop : loops) {
      results += ", " + loop;
      result_types += fmt::format(", {}", kAny);
    }
    line(fmt::format("{} = transform.structured.{} {} tile_sizes [{}] : ({}) -> ({})", results,
                     fuse_producers ? "fuse" : "tile_using_for", op, fmt::join(sizes, ", "), kAny, result_types));
    return {tiled, loops};
  }

 private:
  int next_id_ = 0;
  std::string body_;
  std::string sequences_;
};

// One statically shaped piece of the problem and the handle of its linalg op.
struct Leaf {
  std::string op;
  std::int64_t m, rows;
  ColumnPanel panel;
};

struct LeafLoops {
  std::vector<std::string> reduction;  // batch loop, then K loop (those that exist), by tag
  std::int64_t k_steps = 0;            // trip count of the K loop; 0 without one
};

// Tile sizes in the payload op's iteration order: (b, m, n, k), (b, s, m, n, k)
// when the reduction is split into partial sums over s, or (b, m, n, k, v) for
// bf16, where v (the VNNI pair) is never tiled.
struct IterationSpace {
  std::int64_t ways = 1;
  bool vnni = false;
  std::vector<std::int64_t> sizes(std::int64_t b, std::int64_t s, std::int64_t m, std::int64_t n,
                                  std::int64_t k) const {
    if (vnni) return {b, m, n, k, 0};
    if (ways > 1) return {b, s, m, n, k};
    return {b, m, n, k};
  }
};

// The reduction loops are tagged so that they can be found again once a pass
// has run on the function (which invalidates every handle inside it).
std::string reductionLoopTag(std::size_t index) { return fmt::format("nkbench.reduction_loop_{}", index); }

// Whether C's blocks start from a zero fill: beta 0, or partial sums of a
// split reduction (each partial starts at zero).
bool startsFromZero(const Problem& p, const RegisterBlockPlan& plan) { return !p.accumulate || plan.split.ways > 1; }

// The tag of piece `index` of a split C, to find it again after a pass.
std::string pieceTag(std::size_t index) { return fmt::format("nkbench.piece_{}", index); }

LeafLoops scheduleLeaf(ScriptWriter& w, const Problem& p, const RegisterBlockPlan& plan, const Leaf& leaf,
                       std::size_t& loop_tags) {
  const bool vnni = plan.nanokernel == NanokernelKind::Bf16Dot;
  const bool widen = widensInRegisters(plan.nanokernel);
  const IterationSpace space{plan.split.ways, vnni};
  const std::int64_t ways = plan.split.ways;
  const std::int64_t batch = plan.split.dim == ReductionSplit::Dim::Batch ? p.batch / ways : p.batch;
  // bf16 steps over K in pairs.
  const std::int64_t k = vnni ? p.k / 2 : plan.split.dim == ReductionSplit::Dim::K ? p.k / ways : p.k;
  const std::int64_t s_block = ways > 1 ? ways : 0;
  // 0. Chunks of the batch that fit the cache budget, each a full pass over C.
  std::string op = leaf.op;
  if (plan.batch_chunk > 0) op = w.tile(op, space.sizes(plan.batch_chunk, 0, 0, 0, 0), false).first;
  // 1. Register block (all partial sums of a split in it); zero fills are fused so
  //    that accumulators start in registers (not across chunks: there C carries
  //    the running sums).
  // The widening route also fuses its bf16 -> f32 producers here.
  const bool zero_init = startsFromZero(p, plan);
  auto [block, block_loops] = w.tile(op, space.sizes(0, s_block, leaf.rows, leaf.panel.blockColumns(), 0),
                                     (zero_init || widen) && plan.batch_chunk == 0);
  // 2. Batch-reduce and K loops, step 1: each step is one rank-1 update of the block.
  std::string body = block;
  LeafLoops loops;
  std::vector<std::string> reduction_loops;
  const std::int64_t batch_step = (plan.batch_chunk > 0 ? plan.batch_chunk : batch) > 1 ? 1 : 0;
  const std::int64_t k_step = k > 1 ? 1 : 0;
  if (batch_step || k_step) {
    std::tie(body, reduction_loops) = w.tile(block, space.sizes(batch_step, 0, 0, 0, k_step), false);
    if (k_step) loops.k_steps = k;
    for (const std::string& loop : reduction_loops) {
      loops.reduction.push_back(reductionLoopTag(loop_tags++));
      w.line(fmt::format("transform.annotate {} \"{}\" : {}", loop, loops.reduction.back(), kAny));
    }
  }
  // Widening route: the bf16 -> f32 ops follow their uses down into each new
  // innermost loop, so that only the values of one step are widened, in registers.
  std::string widen_scope = block_loops.back();
  auto fuseWideningInto = [&](const std::string& loop) {
    const std::string producers = w.fresh("widen");
    w.line(fmt::format("{} = transform.structured.match ops{{[\"linalg.generic\"]}} in {} : ({}) -> {}", producers,
                       widen_scope, kAny, kAny));
    w.line(fmt::format("{}, {} = transform.structured.fuse_into_containing_op {} into {} : ({}, {}) -> ({}, {})",
                       w.fresh("widened"), w.fresh("scope"), producers, loop, kAny, kAny, kAny, kAny));
    widen_scope = loop;
  };
  if (widen && !reduction_loops.empty()) fuseWideningInto(reduction_loops.back());
  // 3. Nanokernel granularity: 1 partial x 1 row x `lanes` columns, then unroll the block fully.
  const std::int64_t s_step = ways > 1 ? 1 : 0;
  const std::int64_t row_step = leaf.rows > 1 ? 1 : 0;
  const std::int64_t columns = leaf.panel.blockColumns();
  const std::int64_t col_step = columns > leaf.panel.lanes ? leaf.panel.lanes : 0;
  std::vector<std::string> register_loops;
  if (s_step || row_step || col_step) {
    std::tie(body, register_loops) = w.tile(body, space.sizes(0, s_step, row_step, col_step, 0), false);
    if (widen) fuseWideningInto(register_loops.back());
  }
  if (widen) {
    const std::string producers = w.fresh("widen");
    w.line(fmt::format("{} = transform.structured.match ops{{[\"linalg.generic\"]}} in {} : ({}) -> {}", producers,
                       widen_scope, kAny, kAny));
    w.line(fmt::format("transform.structured.vectorize {} : {}", producers, kAny));
  }
  // Innermost loop first; factors equal trip counts, so the loops disappear.
  std::vector<std::int64_t> factors;
  if (s_step) factors.push_back(ways);
  if (row_step) factors.push_back(leaf.rows);
  if (col_step) factors.push_back((columns + leaf.panel.lanes - 1) / leaf.panel.lanes);
  auto unroll = [&] {
    for (std::size_t l = register_loops.size(); l-- > 0;)
      w.line(fmt::format("transform.loop.unroll {} {{factor = {}}} : {}", register_loops[l], factors[l], kAny));
  };
  if (!leaf.panel.isEdgeBlock()) {
    w.line(fmt::format("transform.structured.vectorize {} {{create_named_contraction}} : {}", body, kAny));
    unroll();
    return loops;
  }
  // An edge block's last vector is narrower: unrolled first and canonicalized, its
  // pieces are static, each vectorized at full width, the last one with masks
  // (see edge_masks.h for what becomes of them).
  unroll();
  const std::string scope = reduction_loops.empty() ? block_loops.back() : reduction_loops.back();
  if (!register_loops.empty())
    w.line(fmt::format("transform.apply_patterns to {} {{\n      transform.apply_patterns.canonicalization\n    }} : {}",
                       scope, kAny));
  const std::string pieces = w.fresh("pieces");
  w.line(fmt::format("{} = transform.structured.match ops{{[\"{}\"]}} in {} : ({}) -> {}", pieces,
                     payloadOp(plan).name, scope, kAny, kAny));
  // Full-width vectors of one partial, row and step: (b, s, m, n, k), or (b, m, n, k, v) with the VNNI pair.
  const std::vector<std::int64_t> vector_sizes =
      vnni ? std::vector<std::int64_t>{1, 1, leaf.panel.lanes, 1, 2} : space.sizes(1, 1, 1, leaf.panel.lanes, 1);
  w.line(fmt::format("transform.structured.vectorize {} vector_sizes [{}] {{create_named_contraction}} : {}", pieces,
                     fmt::join(vector_sizes, ", "), kAny));
  return loops;
}

// A bf16 C's prologue or epilogue (see payload_ir.h): one vector of a row at a
// time, and the columns past the last full vector as one narrower vector, so that
// every vector is static: no run-time masks (AVX2 has no 16-bit masked stores).
// The prologue is tiled before the register blocks, so that their producer fusion
// stops at its loops instead of cloning it into blocks.
void scheduleCConversion(ScriptWriter& w, const Problem& p, const char* tag, std::int64_t lanes) {
  const std::string conversion = w.fresh("conversion");
  w.line(fmt::format("{} = transform.structured.match ops{{[\"linalg.generic\"]}} attributes {{{}}} in %root : ({}) -> {}",
                     conversion, tag, kAny, kAny));
  // Rows cut into `columns`-wide vectors; 0: the whole row is one vector.
  auto vectorizeRows = [&](const std::string& op, std::int64_t columns) {
    w.line(fmt::format("transform.structured.vectorize {} : {}", w.tile(op, {1, columns}, false).first, kAny));
  };
  const std::int64_t full_columns = p.n / lanes * lanes;
  if (full_columns == 0 || full_columns == p.n) {
    vectorizeRows(conversion, full_columns == 0 ? 0 : lanes);
    return;
  }
  const auto [full, tail] = w.split(conversion, 1, full_columns);
  vectorizeRows(full, lanes);
  vectorizeRows(tail, 0);
}

}  // namespace

TransformSchedule buildTransformSchedule(const Problem& p, const RegisterBlockPlan& plan, Lowering lowering) {
  ScriptWriter w;
  w.line(fmt::format("%func = transform.structured.match ops{{[\"func.func\"]}} in %root : ({}) -> {}", kAny, kAny));
  const PayloadOp payload_op = payloadOp(plan);
  w.line(fmt::format("%brgemm = transform.structured.match ops{{[\"{}\"]}} in %root : ({}) -> {}", payload_op.name,
                     kAny, kAny));

  const bool bf16_c = p.c_dtype == DType::BF16;
  if (bf16_c && p.accumulate) scheduleCConversion(w, p, kCPrologue, plan.vector_lanes);

  // One statically shaped leaf per (band, panel) of the plan: split off the one op,
  // or, on the widening route, the payload's regions matched by their attribute.
  std::vector<Leaf> leaves;
  std::string rest = "%brgemm";
  const bool regions_in_payload = widensInRegisters(plan.nanokernel);
  for (std::size_t bi = 0; bi < plan.bands.size() && regions_in_payload; ++bi)
    for (const ColumnPanel& panel : plan.bands[bi].panels) {
      const RowBand& band = plan.bands[bi];
      const std::string region = w.fresh("region");
      w.line(fmt::format("{} = transform.structured.match ops{{[\"linalg.batch_reduce_matmul\"]}} "
                         "attributes {{nkbench.region = {} : i64}} in %root : ({}) -> {}",
                         region, leaves.size(), kAny, kAny));
      leaves.push_back({region, band.size, band.rows, panel});
    }
  for (std::size_t bi = 0; bi < plan.bands.size() && !regions_in_payload; ++bi) {
    const RowBand& band = plan.bands[bi];
    std::string band_op = rest;
    if (bi + 1 < plan.bands.size()) std::tie(band_op, rest) = w.split(rest, payload_op.m_dim, band.size);
    std::string panel_rest = band_op;
    for (std::size_t pi = 0; pi < band.panels.size(); ++pi) {
      const ColumnPanel& panel = band.panels[pi];
      std::string panel_op = panel_rest;
      if (pi + 1 < band.panels.size()) std::tie(panel_op, panel_rest) = w.split(panel_rest, payload_op.n_dim, panel.size);
      leaves.push_back({panel_op, band.size, band.rows, panel});
    }
  }

  // Pieces of a split C under a zero fill: each piece's destination a fill of
  // its own, so that tiling fuses it (zero_fills.h). The pass invalidates the
  // pieces' handles: they are tagged and matched again.
  const bool zero_init = startsFromZero(p, plan);
  std::string func = "%func";
  if (zero_init && leaves.size() > 1) {
    for (std::size_t i = 0; i < leaves.size(); ++i)
      w.line(fmt::format("transform.annotate {} \"{}\" : {}", leaves[i].op, pieceTag(i), kAny));
    func = w.fresh("func");
    w.line(fmt::format("{} = transform.apply_registered_pass \"{}\" to %func : ({}) -> {}", func, kZeroFillsPass,
                       kAny, kAny));
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      leaves[i].op = w.fresh("piece");
      w.line(fmt::format("{} = transform.structured.match attributes {{{}}} in {} : ({}) -> {}", leaves[i].op,
                         pieceTag(i), func, kAny, kAny));
    }
  }

  std::vector<LeafLoops> leaf_loops;
  std::size_t loop_tags = 0;
  for (const Leaf& leaf : leaves) leaf_loops.push_back(scheduleLeaf(w, p, plan, leaf, loop_tags));

  if (zero_init) {
    w.line(fmt::format("%fills = transform.structured.match ops{{[\"linalg.fill\"]}} in %root : ({}) -> {}", kAny, kAny));
    w.line(fmt::format("transform.structured.vectorize %fills : {}", kAny));
  }
  if (bf16_c) scheduleCConversion(w, p, kCEpilogue, plan.vector_lanes);
  if (plan.split.ways > 1) {
    w.line(fmt::format("%sums = transform.structured.match ops{{[\"linalg.reduce\"]}} in %root : ({}) -> {}", kAny, kAny));
    w.line(fmt::format("transform.structured.vectorize %sums : {}", kAny));
  }
  if (plan.hasMaskedEdges()) {
    const std::string masked = w.fresh("func");
    w.line(fmt::format("{} = transform.apply_registered_pass \"{}\" to {} : ({}) -> {}", masked, kEdgeMaskPass, func,
                       kAny, kAny));
    func = masked;
  }
  TransformSchedule schedule;
  // bf16: the extension to f32 folds into the contraction (a mixed-type contract).
  const ScheduleCleanup folded{.fold_tensor_subsets = true,
                               .fold_arith_extension = plan.nanokernel == NanokernelKind::Bf16Dot};
  w.endSequence(kTileSequence, "Register blocks tiled, vectorized and unrolled. Then the compiler applies " +
                                   folded.describe() + ".");
  schedule.steps.push_back({kTileSequence, folded});
  w.line(fmt::format("%func = transform.structured.match ops{{[\"func.func\"]}} in %root : ({}) -> {}", kAny, kAny));
  func = "%func";
  // The clean-up folded the tiles of the dot product's zero-padded B into their
  // reads: an edge vector read from a tile is now read from B, which the edge
  // pass reads from the padded source, as one whole vector instead of a gather
  // of the edge's pairs.
  if (plan.hasMaskedEdges() && plan.nanokernel == NanokernelKind::Bf16Dot) {
    const std::string padded = w.fresh("func");
    w.line(fmt::format("{} = transform.apply_registered_pass \"{}\" to {} : ({}) -> {}", padded, kEdgeMaskPass, func,
                       kAny, kAny));
    func = padded;
  }
  // Keep the C block in registers across the whole reduction: K loop, then batch loop.
  for (const LeafLoops& loops : leaf_loops)
    for (std::size_t i = loops.reduction.size(); i-- > 0;) {
      const std::string loop = w.fresh("reduction");
      w.line(fmt::format("{} = transform.structured.match attributes {{{}}} in {} : ({}) -> {}", loop,
                         loops.reduction[i], func, kAny, kAny));
      w.line(fmt::format("transform.loop.hoist_loop_invariant_subsets {} : {}", loop, kAny));
    }
  // Hoisted, the accumulators' first reads see C's zero fill: zeros, and the
  // fill, overwritten by the blocks, goes (zero_fills.h).
  if (zero_init) {
    const std::string hoisted = w.fresh("func");
    w.line(fmt::format("{} = transform.apply_registered_pass \"{}\" to {} : ({}) -> {}", hoisted, kZeroFillsPass, func,
                       kAny, kAny));
    func = hoisted;
  }

  if (plan.k_unroll > 1)
    for (const LeafLoops& loops : leaf_loops) {
      if (loops.k_steps < 2) continue;
      const std::int64_t factor = std::min(loops.k_steps, plan.k_unroll);
      const std::string loop = w.fresh("kloop");
      w.line(fmt::format("{} = transform.structured.match attributes {{{}}} in {} : ({}) -> {}", loop,
                         loops.reduction.back(), func, kAny, kAny));
      w.line(fmt::format("transform.loop.unroll {} {{factor = {}}} : {}", loop, factor, kAny));
    }
  if (lowering == Lowering::Nanokernel) {
    w.line("transform.apply_patterns to " + func + " {");
    w.line(plan.nanokernel == NanokernelKind::Bf16Dot
               ? "  transform.apply_patterns.x86vector.vector_contract_to_packed_type_dot_product"
                                  : "  transform.apply_patterns.x86vector.vector_contract_to_fma");
    w.line(fmt::format("}} : {}", kAny));
  }
  const ScheduleCleanup composed{.sink_vector_producers = lowering == Lowering::Nanokernel,
                                 .lower_multi_reduction = plan.split.ways > 1};
  w.endSequence(kComposeSequence, "Accumulators hoisted, nanokernels composed. Then the compiler applies " +
                                      composed.describe() + ".");
  schedule.steps.push_back({kComposeSequence, composed});
  schedule.script = w.module();
  return schedule;
}

std::string ScheduleCleanup::describe() const {
  // In the order the patterns are added (schedule_cleanups.cpp).
  std::vector<std::string> patterns;
  if (fold_tensor_subsets) patterns.emplace_back("tensor.fold_tensor_subset_ops_into_vector_transfers");
  if (fold_arith_extension) patterns.emplace_back("vector.fold_arith_extension");
  if (lower_multi_reduction) patterns.emplace_back("vector.lower_multi_reduction innerparallel");
  patterns.emplace_back("canonicalization");
  return fmt::format("{}, {}then CSE", fmt::join(patterns, " + "),
                     sink_vector_producers ? "then tensor reads sunk to their first users in program order, " : "");
}

}  // namespace nkbench::mlir_backend
