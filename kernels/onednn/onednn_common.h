// Small pieces both oneDNN routes (the matmul backend and the mlp) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "harness/core/problem.h"

namespace nkbench::onednn {

// Only an OpenMP build of oneDNN lets nkbench set its thread count.
constexpr bool kThreadsSettable = DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP;
// oneDNN sizes its work split by the thread count when a primitive is made, so call this first.
void setThreadCount(int threads);

dnnl::memory::data_type operandType(DType dtype);
// A dense row-major rows x cols matrix.
dnnl::memory::desc plainMatrix(std::int64_t rows, std::int64_t cols, DType dtype);

// Element `offset` of an operand of `dtype`. oneDNN only reads the inputs, but its
// memory objects take non-const handles.
void* elementAt(const void* base, std::int64_t offset, DType dtype);

// impl_info_str(), with the ISA cap added where the name does not say it: it names
// the ISA for brgemm ("brg:avx512_core") but not for "gemm:jit", whose kernels follow the cap.
std::string implementationName(const dnnl::primitive_desc_base& pd);

// A reorder with its two memories: user layout -> oneDNN's, or between C types.
struct Reorder {
  dnnl::reorder primitive;
  dnnl::memory from, to;
  void execute(const dnnl::stream& stream) { primitive.execute(stream, from, to); }
};

// pack() of both routes: the weight reorders, run to the end. A oneDNN failure
// becomes an Error that names `case_name` where it is not empty.
void runWeightReorders(std::vector<Reorder>& reorders, dnnl::stream& stream, const std::string& case_name);

}  // namespace nkbench::onednn
