// Sharding: splitting a run's cases into N disjoint parts that separate
// machines run independently (`nkbench run --shard I/N`), merged afterwards.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/suite/suite.h"

namespace nkbench {

// Shard `index` of `count`, numbered from 1: "1/4" is the first of four.
struct Shard {
  int index = 1;
  int count = 1;

  friend bool operator==(const Shard&, const Shard&) = default;
};

// Parses "I/N" with 1 <= I <= N. Otherwise nullopt, and `why` says what is wrong.
std::optional<Shard> parseShard(std::string_view text, std::string* why);
std::string toString(const Shard& shard);  // "I/N"

// What a case is estimated to cost, in FLOP-equivalents: a fixed cost that every
// case pays (timing, compiling) plus its FLOPs.
double estimatedCaseCost(const SuiteCase& c);

// The shard (1-based) of each case, by greedy longest-processing-time over the
// estimated cost of each case: the costliest case first goes to the least loaded
// shard, ties broken by case order and then by shard number. It depends only on
// the cases and their order, never on the host or on timing options, so every
// machine computes the same partition.
std::vector<int> assignShards(const std::vector<SuiteCase>& cases, int count);

// The cases of `shard`, in their original order.
std::vector<SuiteCase> casesOfShard(const std::vector<SuiteCase>& cases, const Shard& shard);

}  // namespace nkbench
