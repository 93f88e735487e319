#include "reference/reference_gemm.h"

#include <Eigen/Core>

#include "reference/reference_eigen.h"

namespace nkbench {

// Double precision: exact for the exact-integer fill (all sums < 2^24), and
// far below fp32's error for random data.
ReferenceResult referenceGemm(const Problem& problem, const float* a, const float* b,
                              const float* c_init) {
  const Eigen::Index m = problem.m;
  const Eigen::Index n = problem.n;
  const Eigen::Index k = problem.k;
  ReferenceResult result;
  result.value.assign(static_cast<std::size_t>(problem.cElements()), 0.0);
  result.magnitude.assign(static_cast<std::size_t>(problem.cElements()), 0.0);
  DoubleMap value(result.value.data(), m, n);
  DoubleMap magnitude(result.magnitude.data(), m, n);

  if (problem.accumulate) {
    const DoubleMatrix c = ConstFloatMap(c_init, m, n).cast<double>();
    value = c;
    magnitude = c.cwiseAbs();
  }
  for (std::int64_t batch = 0; batch < problem.batch; ++batch) {
    const DoubleMatrix a_b = ConstFloatMap(a + batch * m * k, m, k).cast<double>();
    const DoubleMatrix b_b = ConstFloatMap(b + batch * k * n, k, n).cast<double>();
    value.noalias() += a_b * b_b;
    magnitude.noalias() += a_b.cwiseAbs() * b_b.cwiseAbs();
  }
  return result;
}

}  // namespace nkbench
