#include "kernels/eigen/eigen_products.h"

#include <Eigen/Core>

namespace nkbench::eigen {
namespace {
using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMajorMatrix>;
using MatrixMap = Eigen::Map<RowMajorMatrix>;
}  // namespace

void batchedProduct(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::int64_t batch, bool accumulate, int threads) {
  Eigen::setNbThreads(threads);
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

void denseLayer(const float* x, const float* w, const float* bias, float* y, std::int64_t m, std::int64_t n,
                std::int64_t k, bool relu, int threads) {
  Eigen::setNbThreads(threads);
  MatrixMap y_map(y, m, n);
  y_map.noalias() = ConstMatrixMap(x, m, k) * ConstMatrixMap(w, k, n);
  if (bias) y_map.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, n);
  if (relu) y_map = y_map.cwiseMax(0.0f);
}

namespace {

// What EIGEN_VECTORIZE_* say Eigen's kernels were compiled for: its name, and the
// nkbench level that names it (empty below AVX2+FMA).
struct CompiledVectorIsa {
  const char* name;
  const char* level;
};

constexpr CompiledVectorIsa kCompiled =
#if defined(EIGEN_VECTORIZE_AVX512)
    {"avx512", "avx512"};
#elif defined(EIGEN_VECTORIZE_AVX2) && defined(EIGEN_VECTORIZE_FMA)
    {"avx2+fma", "avx2"};
#elif defined(EIGEN_VECTORIZE_AVX2)
    {"avx2", ""};
#elif defined(EIGEN_VECTORIZE_SSE2)
    {"sse2", ""};
#else
    {"scalar", ""};
#endif

}  // namespace

const char* compiledIsa() { return kCompiled.name; }

const char* compiledLevel() { return kCompiled.level; }

}  // namespace nkbench::eigen
