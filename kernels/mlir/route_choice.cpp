#include "kernels/mlir/route_choice.h"

#include <fmt/format.h>

#include "kernels/mlir/amx/amx_payload_ir.h"

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

RouteChoice chooseRoute(Isa isa, const Problem& problem, const std::string& named_schedule) {
  const Schedule& chosen = selectSchedule(isa, problem.dtype, named_schedule);
  if (!named_schedule.empty() || chosen.nanokernel != NanokernelKind::AmxTile) return {&chosen, ""};
  const double utilisation = tileUtilisation(problem);
  if (utilisation >= kMinTileUtilisation) return {&chosen, ""};
  return {&selectSchedule(Isa::Avx512Bf16, problem.dtype),
          fmt::format("vector route: the tiles would do {:.0f}% useful work, below {:.0f}%", 100 * utilisation,
                      100 * kMinTileUtilisation)};
}

}  // namespace nkbench::mlir_backend
