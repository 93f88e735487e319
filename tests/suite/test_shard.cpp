#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "harness/suite/shard.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

SuiteCase makeCase(const std::string& id, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  return {id, test::makeProblem(m, n, k, batch, false), 0};
}

// A paper-like suite: many small BRGEMMs, a few large GEMMs, in no particular order.
std::vector<SuiteCase> skewedSuite() {
  std::vector<SuiteCase> cases;
  for (int b : {8, 16, 32, 64}) {
    cases.push_back(makeCase(fmt::format("brgemm-32-b{}", b), 32, 32, 32, b));
    cases.push_back(makeCase(fmt::format("brgemm-64-b{}", b), 64, 64, 64, b));
  }
  cases.push_back(makeCase("gemm-1024x2560x1024", 1024, 2560, 1024));
  for (int i = 0; i < 10; ++i) cases.push_back(makeCase(fmt::format("tiny-{}", i), 4, 16, 32, 32));
  cases.push_back(makeCase("gemm-1024", 1024, 1024, 1024));
  cases.push_back(makeCase("gemm-256x1024x1024", 256, 1024, 1024));
  return cases;
}

std::vector<std::string> idsOf(const std::vector<SuiteCase>& cases) {
  std::vector<std::string> ids;
  for (const SuiteCase& c : cases) ids.push_back(c.id);
  return ids;
}

TEST(Shard, ParsesIOfNCountedFromOne) {
  std::string why;
  EXPECT_EQ(parseShard("1/1", &why), (Shard{1, 1}));
  EXPECT_EQ(parseShard("3/4", &why), (Shard{3, 4}));
  EXPECT_EQ(parseShard("12/100", &why), (Shard{12, 100}));
  EXPECT_EQ(toString(Shard{3, 4}), "3/4");
}

TEST(Shard, RejectsBadTextSayingWhy) {
  const auto why = [](const std::string& text) {
    std::string reason;
    EXPECT_FALSE(parseShard(text, &reason).has_value()) << text;
    return reason;
  };
  EXPECT_NE(why("0/4").find("counted from 1"), std::string::npos) << why("0/4");
  EXPECT_NE(why("3/2").find("at most N"), std::string::npos) << why("3/2");
  EXPECT_NE(why("1/0").find("at least 1"), std::string::npos) << why("1/0");
  for (const char* text :
       {"a/b", "2", "", "/", "1/", "/2", "-1/2", "+1/2", "1/2/3", " 1/2", "1/2 ", "1.0/2", "1/99999999999"})
    EXPECT_NE(why(text).find("expected I/N"), std::string::npos) << text << ": " << why(text);
}

TEST(Shard, ShardsAreDisjointAndCoverEveryCaseInOrder) {
  const std::vector<SuiteCase> cases = skewedSuite();
  const std::vector<std::string> suite_order = idsOf(cases);
  for (int count = 1; count <= int(cases.size()) + 2; ++count) {
    std::vector<std::string> seen;
    for (int index = 1; index <= count; ++index) {
      const std::vector<std::string> ids = idsOf(casesOfShard(cases, {index, count}));
      // Within a shard, cases keep the suite's order.
      std::vector<std::ptrdiff_t> positions;
      for (const std::string& id : ids)
        positions.push_back(std::find(suite_order.begin(), suite_order.end(), id) - suite_order.begin());
      EXPECT_TRUE(std::is_sorted(positions.begin(), positions.end())) << count;
      seen.insert(seen.end(), ids.begin(), ids.end());
    }
    std::vector<std::string> all = suite_order;
    std::sort(all.begin(), all.end());
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, all) << "N = " << count;  // each case exactly once
  }
}

TEST(Shard, PartitionIsDeterministic) {
  const std::vector<SuiteCase> cases = skewedSuite();
  EXPECT_EQ(assignShards(cases, 4), assignShards(cases, 4));
  // A fixed expectation: the partition must not change with the host or between builds,
  // or shards run by different machines (or versions) would overlap.
  const std::vector<SuiteCase> small = {makeCase("a", 8, 8, 8), makeCase("big", 1024, 1024, 1024),
                                        makeCase("b", 8, 8, 8), makeCase("c", 16, 16, 16), makeCase("d", 8, 8, 8)};
  EXPECT_EQ(assignShards(small, 2), (std::vector<int>{2, 1, 1, 2, 2}));
}

TEST(Shard, EqualCasesGoRoundRobin) {
  std::vector<SuiteCase> cases;
  for (int i = 0; i < 7; ++i) cases.push_back(makeCase(fmt::format("c{}", i), 8, 8, 8));
  EXPECT_EQ(assignShards(cases, 3), (std::vector<int>{1, 2, 3, 1, 2, 3, 1}));
}

TEST(Shard, LoadsAreBalancedOnASkewedSuite) {
  const std::vector<SuiteCase> cases = skewedSuite();
  double costliest = 0.0;
  for (const SuiteCase& c : cases) costliest = std::max(costliest, estimatedCaseCost(c));
  for (int count : {2, 3, 4, 7}) {
    std::vector<double> load(std::size_t(count), 0.0);
    std::vector<int> members(std::size_t(count), 0);
    const std::vector<int> shard_of = assignShards(cases, count);
    for (std::size_t c = 0; c < cases.size(); ++c) {
      load[std::size_t(shard_of[c] - 1)] += estimatedCaseCost(cases[c]);
      ++members[std::size_t(shard_of[c] - 1)];
    }
    const auto [lightest, heaviest] = std::minmax_element(load.begin(), load.end());
    // Greedy LPT: no shard exceeds the lightest by more than one case.
    EXPECT_LE(*heaviest - *lightest, costliest) << "N = " << count;
    // The big GEMMs do not leave their shards nearly empty while others take all small cases.
    const auto [fewest, most] = std::minmax_element(members.begin(), members.end());
    EXPECT_LE(*most - *fewest, 2) << "N = " << count;
  }
}

TEST(Shard, MoreShardsThanCasesLeavesSomeEmpty) {
  const std::vector<SuiteCase> cases = {makeCase("a", 8, 8, 8), makeCase("b", 16, 16, 16)};
  EXPECT_EQ(casesOfShard(cases, {1, 4}).size(), 1u);
  EXPECT_EQ(casesOfShard(cases, {2, 4}).size(), 1u);
  EXPECT_TRUE(casesOfShard(cases, {3, 4}).empty());
  EXPECT_TRUE(casesOfShard(cases, {4, 4}).empty());
  EXPECT_EQ(idsOf(casesOfShard(cases, {1, 1})), (std::vector<std::string>{"a", "b"}));
}

// Found by fuzz_options: a count this large took 16 GiB and minutes per case.
TEST(Shard, AHugeCountPartitionsLikeOneShardPerCase) {
  const std::vector<SuiteCase> cases = skewedSuite();
  const int huge = std::numeric_limits<int>::max();
  EXPECT_EQ(assignShards(cases, huge), assignShards(cases, int(cases.size())));
  EXPECT_TRUE(casesOfShard(cases, {5265, 147483647}).empty());
  EXPECT_EQ(casesOfShard(cases, {1, huge}).size(), 1u);
}

}  // namespace
}  // namespace nkbench
