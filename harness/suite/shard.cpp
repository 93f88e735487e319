#include "harness/suite/shard.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>

namespace nkbench {
namespace {

// Every case costs seconds whatever its size: each backend is timed for
// --reps x --min-time and compiled. Its FLOPs add the reference product, the
// verification calls and longer timed calls. A fixed cost, in FLOP-equivalents,
// keeps one huge GEMM from being balanced against dozens of small BRGEMMs that
// together take far longer.
constexpr double kFixedCaseCostFlops = 1e10;

// A decimal integer and nothing else: no sign, no spaces.
std::optional<int> parseUnsigned(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || text.front() == '-' || error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

}  // namespace

std::optional<Shard> parseShard(std::string_view text, std::string* why) {
  const auto fail = [why](std::string reason) -> std::optional<Shard> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const std::string expected_form = "expected I/N (shard I of N, counted from 1), e.g. 1/4";
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return fail(expected_form);
  const std::optional<int> index = parseUnsigned(text.substr(0, slash));
  const std::optional<int> count = parseUnsigned(text.substr(slash + 1));
  if (!index || !count) return fail(expected_form);
  if (*count < 1) return fail("N must be at least 1");
  if (*index < 1) return fail(fmt::format("shards are counted from 1 (1/{} is the first, not 0/{})", *count, *count));
  if (*index > *count) return fail(fmt::format("I must be at most N: there is no shard {} of {}", *index, *count));
  return Shard{*index, *count};
}

std::string toString(const Shard& shard) { return fmt::format("{}/{}", shard.index, shard.count); }

double estimatedCaseCost(const SuiteCase& c) { return kFixedCaseCostFlops + c.problem.flops(); }

std::vector<int> assignShards(const std::vector<SuiteCase>& cases, int count) {
  std::vector<std::size_t> by_cost(cases.size());
  std::iota(by_cost.begin(), by_cost.end(), 0);
  std::stable_sort(by_cost.begin(), by_cost.end(), [&cases](std::size_t a, std::size_t b) {
    return estimatedCaseCost(cases[a]) > estimatedCaseCost(cases[b]);
  });
  // Every case costs more than nothing, so with more shards than cases each case
  // takes the first empty one: shards past the case count never take a case, and
  // --shard 1/2147483647 needs no load per shard.
  const std::size_t used = std::min(std::size_t(std::max(count, 1)), std::max<std::size_t>(cases.size(), 1));
  std::vector<double> load(used, 0.0);
  std::vector<int> shard_of(cases.size());
  for (std::size_t c : by_cost) {
    const auto lightest = std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += estimatedCaseCost(cases[c]);
    shard_of[c] = int(lightest) + 1;
  }
  return shard_of;
}

std::vector<SuiteCase> casesOfShard(const std::vector<SuiteCase>& cases, const Shard& shard) {
  const std::vector<int> shard_of = assignShards(cases, shard.count);
  std::vector<SuiteCase> selected;
  for (std::size_t c = 0; c < cases.size(); ++c)
    if (shard_of[c] == shard.index) selected.push_back(cases[c]);
  return selected;
}

}  // namespace nkbench
