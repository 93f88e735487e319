// The Eigen matrices the reference computations share: operands viewed as the
// row-major floats they are, sums held in double. For reference/*.cpp only.
#pragma once

#include <Eigen/Core>

namespace nkbench {

using FloatMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using DoubleMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstFloatMap = Eigen::Map<const FloatMatrix>;
using DoubleMap = Eigen::Map<DoubleMatrix>;

}  // namespace nkbench
