#include "kernels/mlir/route_choice.h"

#include <fmt/format.h>

#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/tuning/shape_class.h"

namespace nkbench::mlir_backend {
namespace {

std::int64_t roundUp(std::int64_t value, std::int64_t step) { return (value + step - 1) / step * step; }

}  // namespace

double tileUtilisation(const Problem& p) {
  const double useful = double(p.m) * double(p.n) * double(p.k);
  const double tiles = double(roundUp(p.m, kAmxTileRows)) * double(roundUp(p.n, kAmxTileCols)) *
                       double(roundUp(p.k, kAmxTileK));
  return useful / tiles;
}

RouteChoice chooseRoute(Isa isa, const Problem& problem, const RouteRequest& request) {
  if (!request.named_schedule.empty())
    return {selectSchedule(isa, problem.dtype, request.named_schedule), "", "--schedule"};
  if (request.tuned) {
    const auto tuned = request.tuned->by_class.find(shapeClassOf(problem, request.caches));
    if (tuned != request.tuned->by_class.end())
      return {selectSchedule(isa, problem.dtype, tuned->second), "", "tuned: " + request.tuned->file};
  }
  Schedule chosen = selectSchedule(isa, problem.dtype);
  if (chosen.nanokernel != NanokernelKind::AmxTile) return {std::move(chosen), "", "analytic"};
  const double utilisation = tileUtilisation(problem);
  if (utilisation >= kMinTileUtilisation) return {std::move(chosen), "", "analytic"};
  return {selectSchedule(Isa::Avx512Bf16, problem.dtype),
          fmt::format("vector route: the tiles would do {:.0f}% useful work, below {:.0f}%", 100 * utilisation,
                      100 * kMinTileUtilisation),
          "analytic"};
}

RouteChoice chooseRoute(Isa isa, const Problem& problem, const std::string& named_schedule) {
  return chooseRoute(isa, problem, RouteRequest{.named_schedule = named_schedule, .tuned = nullptr, .caches = {}});
}

}  // namespace nkbench::mlir_backend
