#include "kernels/mlir/tuning/tuned_schedule.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "kernels/mlir/schedule/schedule.h"
#include "kernels/mlir/tuning/shape_class.h"

namespace nkbench::mlir_backend {

std::string tunedScheduleOrigin(const std::string& schedule, const std::string& file, const std::string& shape_class) {
  return fmt::format("tuned schedule {} ({}, class {})", schedule, file, shape_class);
}

std::optional<std::string> tunedScheduleProblem(Isa isa, const std::string& shape_class, const std::string& schedule,
                                                const std::string& file) {
  const std::string origin = tunedScheduleOrigin(schedule, file, shape_class);
  const std::optional<DType> dtype = shapeClassDType(shape_class);
  if (!dtype) return fmt::format("{}: '{}' is not a shape class (KIND TYPE mROWS nCOLS FOOTPRINT)", origin, shape_class);
  if (schedule.empty()) return origin + ": the name is empty";
  try {
    // Separate epilogue passes are the fused epilogue's comparison, which tune
    // never chooses: a class of bf16 mlps could not run them at all.
    if (!selectSchedule(isa, *dtype, schedule, origin).fused_epilogue)
      return origin + ": :epilogue=separate compares the fused epilogue with separate passes and is not a tuning";
  } catch (const Error& error) {
    return std::string(error.what());
  }
  return std::nullopt;
}

}  // namespace nkbench::mlir_backend
