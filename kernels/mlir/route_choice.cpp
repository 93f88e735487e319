#include "kernels/mlir/route_choice.h"

#include <fmt/format.h>

#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/tuning/shape_class.h"
#include "kernels/mlir/tuning/tuned_schedule.h"

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

std::string scheduleAnMlpRuns(std::string name) {
  constexpr std::string_view kWidenedOnce = "bf16-f32a";
  if (const std::size_t at = name.find(kWidenedOnce); at != std::string::npos)
    name.replace(at, kWidenedOnce.size(), "bf16-widen");
  return name;
}

std::optional<std::string> separateEpilogueUnsupported(const std::string& backend, const Problem& problem,
                                                       const Schedule& schedule) {
  if (schedule.fused_epilogue || (problem.kind == OpKind::Mlp && problem.hasEpilogue())) return std::nullopt;
  return fmt::format("{}: :epilogue=separate runs an mlp's bias and activation as passes, and this {} has none",
                     backend, toString(problem.kind));
}

bool bf16DotSlowerThanFma(const HostPeaks& peaks) {
  return peaks.bf16_dot_gflops > 0 && peaks.fp32_fma_gflops > 0 &&
         peaks.bf16_dot_gflops < kSlowDotFraction * peaks.fp32_fma_gflops;
}

namespace {

// The vector schedule for bf16 under an avx512-bf16 (or higher) cap: the dot
// product, unless the host rule moves it to the FMAs.
RouteChoice bf16VectorRoute(const Problem& problem, const HostPeaks& peaks, std::string reason) {
  if (!bf16DotSlowerThanFma(peaks)) return {selectSchedule(Isa::Avx512Bf16, problem.dtype), std::move(reason), "analytic"};
  const std::string why = fmt::format("f32 FMAs: the vdpbf16ps peak of {:.0f} GFLOPS is below the fp32 FMA peak of "
                                      "{:.0f}",
                                      peaks.bf16_dot_gflops, peaks.fp32_fma_gflops);
  return {selectSchedule(Isa::Avx512, problem.dtype), reason.empty() ? why : reason + "; " + why, "analytic"};
}

// An mlp's layers run the route of its first layer's GEMM, on blocks that can
// take the epilogue and read the bf16 activations the layer before wrote
// (scheduleAnMlpRuns).
RouteChoice mlpRoute(RouteChoice route) {
  if (route.schedule.nanokernel == NanokernelKind::Bf16F32AFma) {
    route.schedule = parseScheduleSpec(scheduleAnMlpRuns(route.schedule.name));
    route.reason += std::string(route.reason.empty() ? "" : "; ") +
                    "mlp: activations stay bf16 between layers, widened in registers";
  }
  return route;
}

// The tuning file's schedule for the problem's shape class, where it has one.
std::optional<RouteChoice> tunedRoute(Isa isa, const Problem& problem, const RouteRequest& request) {
  if (!request.tuned) return std::nullopt;
  const auto tuned = request.tuned->by_class.find(shapeClassOf(problem, request.caches));
  if (tuned == request.tuned->by_class.end()) return std::nullopt;
  return RouteChoice{selectSchedule(isa, problem.dtype, tuned->second,
                                    tunedScheduleOrigin(tuned->second, request.tuned->file, tuned->first)),
                     "", "tuned: " + request.tuned->file};
}

}  // namespace

RouteChoice chooseRoute(Isa isa, const Problem& problem, const RouteRequest& request) {
  if (problem.kind == OpKind::Mlp) {
    // Tuned as an mlp (`nkbench tune` measures mlps whole, in their own shape
    // classes), never by the class of its first layer's GEMM.
    if (request.named_schedule.empty())
      if (std::optional<RouteChoice> tuned = tunedRoute(isa, problem, request)) return mlpRoute(*std::move(tuned));
    RouteRequest first_layer = request;
    first_layer.tuned = nullptr;
    return mlpRoute(chooseRoute(isa, problem.mlpLayer(0), first_layer));
  }
  if (!request.named_schedule.empty())
    return {selectSchedule(isa, problem.dtype, request.named_schedule), "", "--schedule"};
  if (std::optional<RouteChoice> tuned = tunedRoute(isa, problem, request)) return *std::move(tuned);
  Schedule chosen = selectSchedule(isa, problem.dtype);
  if (chosen.nanokernel == NanokernelKind::Bf16Dot) return bf16VectorRoute(problem, request.peaks, "");
  if (chosen.nanokernel != NanokernelKind::AmxTile) return {std::move(chosen), "", "analytic"};
  const double utilisation = tileUtilisation(problem);
  if (utilisation >= kMinTileUtilisation) return {std::move(chosen), "", "analytic"};
  return bf16VectorRoute(problem, request.peaks,
                         fmt::format("vector route: the tiles would do {:.0f}% useful work, below {:.0f}%",
                                     100 * utilisation, 100 * kMinTileUtilisation));
}

RouteChoice chooseRoute(Isa isa, const Problem& problem, const std::string& named_schedule) {
  RouteRequest request;
  request.named_schedule = named_schedule;
  return chooseRoute(isa, problem, request);
}

}  // namespace nkbench::mlir_backend
