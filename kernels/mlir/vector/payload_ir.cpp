#include "kernels/mlir/vector/payload_ir.h"

#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench::mlir_backend {

namespace {

// Reshapes and the contraction that writes the partial sums %p, for a split.
std::string splitContraction(const Problem& p, const ReductionSplit& split, const std::string& a,
                             const std::string& b) {
  const std::int64_t ways = split.ways;
  const bool over_batch = split.dim == ReductionSplit::Dim::Batch;
  // Iteration dims (b, s, m, n, k), s the partial sum. Over the batch, each
  // partial sum takes a contiguous run of entries (entry = s * batch/ways + b):
  // one stream of B per sum that runs on from entry to entry, which the
  // hardware prefetchers follow. Interleaved entries (b * ways + s) made each
  // stream jump an entry at every turn: 0.74-0.92x libxsmm where B streams
  // from L2 (f32 1x64x64 b16, 2x48x100 b8, 1x96x128 b8), 1.03-1.51x as runs.
  // Over K, the sums take interleaved steps (k * ways + s): consecutive rows
  // of B, one stream for all.
  const std::string a4 = over_batch ? fmt::format("{}x{}x{}x{}xf32", ways, p.batch / ways, p.m, p.k)
                                    : fmt::format("{}x{}x{}x{}xf32", p.batch, p.m, p.k / ways, ways);
  const std::string b4 = over_batch ? fmt::format("{}x{}x{}x{}xf32", ways, p.batch / ways, p.k, p.n)
                                    : fmt::format("{}x{}x{}x{}xf32", p.batch, p.k / ways, ways, p.n);
  const char* a_groups = over_batch ? "[[0, 1], [2], [3]]" : "[[0], [1], [2, 3]]";
  const char* b_groups = over_batch ? "[[0, 1], [2], [3]]" : "[[0], [1, 2], [3]]";
  const char* a_map = over_batch ? "(b, s, m, n, k) -> (s, b, m, k)" : "(b, s, m, n, k) -> (b, m, k, s)";
  const char* b_map = over_batch ? "(b, s, m, n, k) -> (s, b, k, n)" : "(b, s, m, n, k) -> (b, k, s, n)";
  const std::string partial = fmt::format("{}x{}x{}xf32", ways, p.m, p.n);
  auto shape = [](const std::string& type) { return type.substr(0, type.size() - 4); };
  auto dims = [&](const std::string& type) {
    std::string out = shape(type);
    for (char& c : out)
      if (c == 'x') c = ',';
    return out;
  };
  return fmt::format(
      "    %a4 = tensor.expand_shape %a {ag} output_shape [{a4d}] : tensor<{a}> into tensor<{a4}>\n"
      "    %b4 = tensor.expand_shape %b {bg} output_shape [{b4d}] : tensor<{b}> into tensor<{b4}>\n"
      "    %p_empty = tensor.empty() : tensor<{pt}>\n"
      "    %p_zero = linalg.fill ins(%zero : f32) outs(%p_empty : tensor<{pt}>) -> tensor<{pt}>\n"
      "    %p = linalg.contract indexing_maps = [affine_map<{am}>, affine_map<{bm}>,\n"
      "                                          affine_map<(b, s, m, n, k) -> (s, m, n)>]\n"
      "        ins(%a4, %b4 : tensor<{a4}>, tensor<{b4}>) outs(%p_zero : tensor<{pt}>) -> tensor<{pt}>\n",
      fmt::arg("a", a), fmt::arg("b", b), fmt::arg("a4", a4), fmt::arg("b4", b4), fmt::arg("a4d", dims(a4)),
      fmt::arg("b4d", dims(b4)), fmt::arg("ag", a_groups), fmt::arg("bg", b_groups), fmt::arg("am", a_map),
      fmt::arg("bm", b_map), fmt::arg("pt", partial));
}

// The widening route: one region per (band, panel) of the plan, each with its own
// bf16 -> f32 ops on its slices of A and B, so that the schedule can fuse them into
// that region's register loops (a shared widening op would sit behind a slice
// that tile-and-fuse cannot see through). Regions carry `nkbench.region = i`.
// `a_is_f32`: A was widened when packed; its slices are used as they are.
std::string widenedRegions(const Problem& p, const RegisterBlockPlan& plan, const std::string& a,
                           const std::string& b, const std::string& c, bool a_is_f32) {
  std::string ir;
  std::string acc = "%c";
  int region = 0;
  for (const RowBand& band : plan.bands)
    for (const ColumnPanel& panel : band.panels) {
      const std::string a_r = fmt::format("{}x{}x{}", p.batch, band.size, p.k);
      const std::string b_r = fmt::format("{}x{}x{}", p.batch, p.k, panel.size);
      const std::string c_r = fmt::format("{}x{}xf32", band.size, panel.size);
      const std::string generic =
          "    %{0}{1} = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,\n"
          "                                              affine_map<(d0, d1, d2) -> (d0, d1, d2)>],\n"
          "                             iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}}\n"
          "        ins(%{0}_bf16_{1} : tensor<{2}xbf16>) outs(%{0}_empty_{1} : tensor<{2}xf32>) {{\n"
          "      ^bb0(%x: bf16, %unused: f32):\n"
          "        %wide = arith.extf %x : bf16 to f32\n"
          "        linalg.yield %wide : f32\n"
          "    }} -> tensor<{2}xf32>\n";
      const std::string a_rows = fmt::format("{}, {}, {}", p.batch, band.size, p.k);
      if (a_is_f32)
        ir += fmt::format("    %a{0} = tensor.extract_slice %a[0, {1}, 0] [{2}] [1, 1, 1] : tensor<{3}> to tensor<{4}xf32>\n",
                          region, band.offset, a_rows, a, a_r);
      else
        ir += fmt::format(
            "    %a_bf16_{0} = tensor.extract_slice %a[0, {1}, 0] [{2}] [1, 1, 1] : tensor<{3}> to tensor<{4}xbf16>\n"
            "    %a_empty_{0} = tensor.empty() : tensor<{4}xf32>\n",
            region, band.offset, a_rows, a, a_r) +
            fmt::format(fmt::runtime(generic), "a", region, a_r);
      ir += fmt::format(
          "    %b_bf16_{0} = tensor.extract_slice %b[0, 0, {1}] [{2}] [1, 1, 1] : tensor<{3}> to tensor<{4}xbf16>\n"
          "    %b_empty_{0} = tensor.empty() : tensor<{4}xf32>\n",
          region, panel.offset, fmt::format("{}, {}, {}", p.batch, p.k, panel.size), b, b_r);
      ir += fmt::format(fmt::runtime(generic), "b", region, b_r);
      std::string init = fmt::format("%c_{}", region);
      ir += fmt::format("    %c_{0} = tensor.extract_slice {1}[{2}, {3}] [{4}, {5}] [1, 1] : tensor<{6}> to tensor<{7}>\n",
                        region, acc, band.offset, panel.offset, band.size, panel.size, c, c_r);
      if (!p.accumulate) {
        ir += fmt::format("    %c_zero_{0} = linalg.fill ins(%zero : f32) outs(%c_{0} : tensor<{1}>) -> tensor<{1}>\n",
                          region, c_r);
        init = fmt::format("%c_zero_{}", region);
      }
      ir += fmt::format(
          "    %r_{0} = linalg.batch_reduce_matmul {{nkbench.region = {0} : i64}}\n"
          "        ins(%a{0}, %b{0} : tensor<{1}xf32>, tensor<{2}xf32>) outs({3} : tensor<{4}>) -> tensor<{4}>\n"
          "    %acc_{0} = tensor.insert_slice %r_{0} into {5}[{6}, {7}] [{8}, {9}] [1, 1] : tensor<{4}> into tensor<{10}>\n",
          region, a_r, b_r, init, c_r, acc, band.offset, panel.offset, band.size, panel.size, c);
      acc = fmt::format("%acc_{}", region);
      ++region;
    }
  ir += fmt::format("    %r = tensor.cast {} : tensor<{}> to tensor<{}>\n", acc, c, c);
  return ir;
}

// An elementwise conversion of all of C (M x N), tagged `tag` for the schedule.
std::string convertC(const Problem& p, const std::string& result, const std::string& input, const std::string& init,
                     const char* from, const char* to, const char* conversion, const char* tag) {
  return fmt::format(
      "    {0} = linalg.generic {{indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>],\n"
      "                           iterator_types = [\"parallel\", \"parallel\"], {1}}}\n"
      "        ins({2} : tensor<{3}x{4}x{5}>) outs({6} : tensor<{3}x{4}x{7}>) {{\n"
      "      ^bb0(%x: {5}, %unused: {7}):\n"
      "        %converted = {8} %x : {5} to {7}\n"
      "        linalg.yield %converted : {7}\n"
      "    }} -> tensor<{3}x{4}x{7}>\n",
      result, tag, input, p.m, p.n, from, init, to, conversion);
}

// How the payload binds C. An f32 C is %c, computed in place. A bf16 C is %c_bf16;
// %c is then an f32 buffer on the stack (C widened into it first under beta 1),
// and the result is rounded into C at the end. On the stack, where the kernel is
// small enough for LLVM to unroll it, the buffer becomes registers: the prologue
// and epilogue then convert the accumulators themselves.
struct CBinding {
  std::string arg_type;   // of the argument %C
  std::string tensors;    // defines %c
  std::string epilogue;   // turns %r into `result`
  std::string result;     // what is written to %C
};

CBinding bindC(const Problem& p, const std::string& c) {
  constexpr const char* kToTensor =
      "    {0} = bufferization.to_tensor {1} restrict writable : memref<{2}> to tensor<{2}>\n";
  if (p.c_dtype != DType::BF16) return {c, fmt::format(kToTensor, "%c", "%C", c), "", "%r"};
  if (p.m * p.n * std::int64_t{sizeof(float)} > kMaxBf16CSumBytes)
    throw Error(fmt::format("mlir: the f32 sum of a bf16 C is kept on the stack, at most {} bytes: {}",
                            kMaxBf16CSumBytes, p.describe()));
  CBinding binding;
  binding.arg_type = fmt::format("{}x{}xbf16", p.m, p.n);
  binding.tensors = fmt::format(kToTensor, "%c_bf16", "%C", binding.arg_type) +
                    fmt::format("    %sum_stack = memref.alloca() {{alignment = 64 : i64, {}}} : memref<{}>\n", kCSumBuffer, c) +
                    fmt::format(kToTensor, p.accumulate ? "%sum_buffer" : "%c", "%sum_stack", c);
  if (p.accumulate) binding.tensors += convertC(p, "%c", "%c_bf16", "%sum_buffer", "bf16", "f32", "arith.extf", kCPrologue);
  binding.epilogue = convertC(p, "%rounded", "%r", "%c_bf16", "f32", "bf16", "arith.truncf", kCEpilogue);
  binding.result = "%rounded";
  return binding;
}

}  // namespace

PayloadOp payloadOp(const RegisterBlockPlan& plan) {
  if (plan.nanokernel == NanokernelKind::Bf16Dot) return {"linalg.contract", 1, 2};
  if (plan.split.ways > 1) return {"linalg.contract", 2, 3};
  return {"linalg.batch_reduce_matmul", 1, 2};
}

std::string buildPayload(const Problem& p, const RegisterBlockPlan& plan) {
  const ReductionSplit& split = plan.split;
  const bool bf16 = plan.nanokernel == NanokernelKind::Bf16Dot;
  const bool widen = widensInRegisters(plan.nanokernel);
  const bool a_is_f32 = readsAInF32(p.dtype, plan.nanokernel);
  if ((p.dtype == DType::BF16) != (bf16 || widen))
    throw Error("mlir: the schedule's nanokernel does not take " + std::string(toString(p.dtype)) + " operands");
  if (p.c_dtype == DType::BF16 && p.dtype != DType::BF16) throw Error("mlir: a bf16 C needs bf16 operands");
  if (bf16 && (p.k % 2 != 0 || split.ways > 1))
    throw Error("mlir: a bf16 payload needs an even K (pad it) and no reduction split: " + p.describe());
  // bf16: A as [b][m][k/2][2] (a reshape of row-major A) and B in VNNI pairs [b][k/2][n][2].
  const std::string a = bf16    ? fmt::format("{}x{}x{}x2xbf16", p.batch, p.m, p.k / 2)
                        : widen ? fmt::format("{}x{}x{}x{}", p.batch, p.m, p.k, a_is_f32 ? "f32" : "bf16")
                                : fmt::format("{}x{}x{}xf32", p.batch, p.m, p.k);
  const std::int64_t packed_n = bf16 ? dotPackedColumns(p.n, plan.vector_lanes) : p.n;
  const std::string b_arg = bf16 ? fmt::format("{}x{}x{}x2xbf16", p.batch, p.k / 2, packed_n) : "";
  const std::string b = bf16    ? fmt::format("{}x{}x{}x2xbf16", p.batch, p.k / 2, p.n)
                        : widen ? fmt::format("{}x{}x{}xbf16", p.batch, p.k, p.n)
                                : fmt::format("{}x{}x{}xf32", p.batch, p.k, p.n);
  const std::string c = fmt::format("{}x{}xf32", p.m, p.n);
  const CBinding c_binding = bindC(p, c);
  std::string init = "%c";
  std::string fill = "    %zero = arith.constant 0.0 : f32\n";
  if (!p.accumulate && !widen) {
    fill += fmt::format("    %c_zero = linalg.fill ins(%zero : f32) outs(%c : tensor<{0}>) -> tensor<{0}>\n", c);
    init = "%c_zero";
  }
  std::string compute;
  if (split.ways > 1) {
    compute = splitContraction(p, split, a, b) +
              fmt::format(
                  "    %r = linalg.reduce ins(%p : tensor<{}x{}xf32>) outs({} : tensor<{}>) dimensions = [0]\n"
                  "        (%in: f32, %acc: f32) {{\n"
                  "          %sum = arith.addf %in, %acc : f32\n"
                  "          linalg.yield %sum : f32\n"
                  "        }}\n",
                  split.ways, c.substr(0, c.size() - 4), init, c);
  } else if (bf16) {
    // Mixed types: bf16 products accumulate in f32, which vectorizes straight to a
    // mixed-type vector.contract that the dot-product nanokernel rewrite matches.
    compute = fmt::format(
        "    %r = linalg.contract indexing_maps = [affine_map<(b, m, n, k, v) -> (b, m, k, v)>,\n"
        "                                          affine_map<(b, m, n, k, v) -> (b, k, n, v)>,\n"
        "                                          affine_map<(b, m, n, k, v) -> (m, n)>]\n"
        "        ins(%a, %b : tensor<{}>, tensor<{}>) outs({} : tensor<{}>) -> tensor<{}>\n",
        a, b, init, c, c);
  } else if (widen) {
    compute = widenedRegions(p, plan, a, b, c, a_is_f32);
  } else {
    compute = fmt::format(
        "    %r = linalg.batch_reduce_matmul ins(%a, %b : tensor<{}>, tensor<{}>)\n"
        "                                    outs({} : tensor<{}>) -> tensor<{}>\n",
        a, b, init, c, c);
  }
  // B as the kernel reads it; on the dot-product route its N columns sliced off
  // its zero-padded VNNI rows.
  std::string b_tensor = fmt::format("    %b = bufferization.to_tensor %B restrict : memref<{0}> to tensor<{0}>\n", b);
  if (bf16 && packed_n != p.n)
    b_tensor = fmt::format(
        "    %b_padded = bufferization.to_tensor %B restrict : memref<{0}> to tensor<{0}>\n"
        "    %b = tensor.extract_slice %b_padded[0, 0, 0, 0] [{1}, {2}, {3}, 2] [1, 1, 1, 1] {{{4}}}\n"
        "        : tensor<{0}> to tensor<{5}>\n",
        b_arg, p.batch, p.k / 2, p.n, kZeroPaddedSlice, b);
  // llvm.noalias lets LLVM keep C in registers across loads of A and B.
  return fmt::format(
      "func.func @{fn}(%A: memref<{a}> {{llvm.noalias}}, %B: memref<{b}> {{llvm.noalias}},\n"
      "                %C: memref<{c}> {{llvm.noalias}}{bias}) {{\n"
      "    %a = bufferization.to_tensor %A restrict : memref<{a}> to tensor<{a}>\n"
      "{b_tensor}"
      "{tensors}"
      "{fill}"
      "{compute}"
      "{epilogue}"
      "    bufferization.materialize_in_destination {result} in restrict writable %C\n"
      "        : (tensor<{c}>, memref<{c}>) -> ()\n"
      "    return\n"
      "}}\n",
      fmt::arg("fn", kKernelFunction), fmt::arg("a", a), fmt::arg("b", bf16 ? b_arg : b), fmt::arg("b_tensor", b_tensor),
      fmt::arg("c", c_binding.arg_type),
      fmt::arg("bias", p.mlp.bias ? fmt::format(", %Bias: memref<{}xf32> {{llvm.noalias}}", p.n) : std::string()),
      fmt::arg("tensors", c_binding.tensors), fmt::arg("fill", fill),
      fmt::arg("compute", compute), fmt::arg("epilogue", c_binding.epilogue), fmt::arg("result", c_binding.result));
}

}  // namespace nkbench::mlir_backend
