#include "kernels/onednn/onednn_common.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "kernels/onednn/onednn_isa_cap.h"

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#endif

namespace nkbench::onednn {

void setThreadCount(int threads) {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

dnnl::memory::data_type operandType(DType dtype) {
  return dtype == DType::BF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

dnnl::memory::desc plainMatrix(std::int64_t rows, std::int64_t cols, DType dtype) {
  return dnnl::memory::desc({rows, cols}, operandType(dtype), dnnl::memory::format_tag::ab);
}

void* elementAt(const void* base, std::int64_t offset, DType dtype) {
  const auto* first = static_cast<const unsigned char*>(base);
  return const_cast<unsigned char*>(first + offset * elementBytes(dtype));
}

std::string implementationName(const dnnl::primitive_desc_base& pd) {
  std::string name = pd.impl_info_str();
  if (name.find("avx") == std::string::npos) name += " (max isa " + effectiveIsa() + ")";
  return name;
}

void runWeightReorders(std::vector<Reorder>& reorders, dnnl::stream& stream, const std::string& case_name) {
  try {
    for (Reorder& reorder : reorders) reorder.execute(stream);
    stream.wait();
  } catch (const dnnl::error& error) {
    throw Error(case_name.empty() ? fmt::format("oneDNN weights reorder failed: {}", error.what())
                                  : fmt::format("oneDNN weights reorder failed for {}: {}", case_name, error.what()));
  }
}

}  // namespace nkbench::onednn
