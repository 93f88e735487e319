#include "reference/reference_mlp.h"

#include <Eigen/Core>

#include "operands/bf16.h"
#include "reference/reference_eigen.h"
#include "reference/rounding_model.h"

namespace nkbench {
namespace {

using DoubleRow = Eigen::Matrix<double, 1, Eigen::Dynamic>;

}  // namespace

ReferenceResult referenceMlp(const Problem& problem, const ProblemData& data) {
  const MlpLayers& layers = problem.mlp;
  const Eigen::Index m = problem.m;
  ReferenceResult result;
  result.value.assign(static_cast<std::size_t>(problem.cElements()), 0.0);
  result.magnitude.assign(static_cast<std::size_t>(problem.cElements()), 0.0);
  result.carried.assign(static_cast<std::size_t>(problem.cElements()), 0.0);
  DoubleMatrix input = ConstFloatMap(data.a.data(), m, problem.k).cast<double>();
  DoubleMatrix input_difference = DoubleMatrix::Zero(m, problem.k);  // X is read as it is
  // Each stored output is rounded once, by the kernel and by this reference alike.
  const double output_rounding = problem.c_dtype == DType::BF16 ? 2 * kBf16HalfUlp : 2 * kFp32UnitRoundoff;
  for (std::int64_t layer = 0; layer < layers.count(); ++layer) {
    const Eigen::Index k = layers.widths[std::size_t(layer)];
    const Eigen::Index n = layers.widths[std::size_t(layer) + 1];
    const DoubleMatrix weights = ConstFloatMap(data.b.data() + layers.weightOffset(layer), k, n).cast<double>();
    DoubleMap value(result.value.data() + problem.mlpOutputOffset(layer), m, n);
    DoubleMap magnitude(result.magnitude.data() + problem.mlpOutputOffset(layer), m, n);
    DoubleMap carried(result.carried.data() + problem.mlpOutputOffset(layer), m, n);
    value.noalias() = input * weights;
    magnitude.noalias() = input.cwiseAbs() * weights.cwiseAbs();
    carried = (input_difference.cwiseAbs2() * weights.cwiseAbs2()).cwiseSqrt();
    if (layers.bias) {
      const DoubleRow bias =
          Eigen::Map<const Eigen::RowVectorXf>(data.bias.data() + layers.biasOffset(layer), n).cast<double>();
      value.rowwise() += bias;
      magnitude.rowwise() += bias.cwiseAbs();
    }
    if (layers.activation == Activation::Relu) value = value.cwiseMax(0.0);
    // The next layer reads this output as the kernels store it.
    input = problem.c_dtype == DType::BF16
                ? DoubleMatrix(value.unaryExpr([](double v) { return double(toFloat(roundToBFloat16(v))); }))
                : DoubleMatrix(value.cast<float>().cast<double>());
    const DoubleMatrix before_rounding =
        magnitude * sumErrorScale(problem.mlpLayer(layer).reductionLength() + 1) + carried;
    input_difference = before_rounding + output_rounding * (value.cwiseAbs() + before_rounding);
  }
  return result;
}

}  // namespace nkbench
