#include "kernels/eigen/eigen_products.h"

#include <Eigen/Core>

namespace nkbench::eigen {
namespace {
using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMajorMatrix>;
using MatrixMap = Eigen::Map<RowMajorMatrix>;
}  // namespace

void batchedProduct(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::int64_t batch, bool accumulate) {
  MatrixMap c_map(c, m, n);
  for (std::int64_t index = 0; index < batch; ++index) {
    ConstMatrixMap a_map(a + index * m * k, m, k);
    ConstMatrixMap b_map(b + index * k * n, k, n);
    // beta 0: the first product overwrites C, so C's old contents are never read.
    if (index == 0 && !accumulate)
      c_map.noalias() = a_map * b_map;
    else
      c_map.noalias() += a_map * b_map;
  }
}

const char* compiledIsa() {
#if defined(EIGEN_VECTORIZE_AVX512)
  return "avx512";
#elif defined(EIGEN_VECTORIZE_AVX2) && defined(EIGEN_VECTORIZE_FMA)
  return "avx2+fma";
#elif defined(EIGEN_VECTORIZE_AVX2)
  return "avx2";
#elif defined(EIGEN_VECTORIZE_SSE2)
  return "sse2";
#else
  return "scalar";
#endif
}

const char* compiledLevel() {
#if defined(EIGEN_VECTORIZE_AVX512)
  return "avx512";
#elif defined(EIGEN_VECTORIZE_AVX2) && defined(EIGEN_VECTORIZE_FMA)
  return "avx2";
#else
  return "";
#endif
}

}  // namespace nkbench::eigen
