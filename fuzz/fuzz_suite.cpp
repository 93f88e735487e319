// The suite parser (`--suite FILE` of run, list and show) on arbitrary bytes,
// then what run --shard does with the cases it returns.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_check.h"
#include "harness/suite/shard.h"
#include "harness/suite/suite.h"

using namespace nkbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::parseOrError([&] {
    const Suite suite = parseSuite(text, "fuzz.yaml");
    // What the parser promises of a suite it returns (README.md, "Suite files").
    fuzz::check(!suite.cases.empty(), "a suite without cases");
    std::set<std::string> ids;
    for (const SuiteCase& c : suite.cases) {
      const Problem& p = c.problem;
      fuzz::check(ids.insert(c.id).second, "a duplicate case id", c.id);
      fuzz::check(c.line >= 1, "a case without a line", c.id);
      fuzz::check(p.m >= 1 && p.n >= 1 && p.k >= 1 && p.batch >= 1, "a size below 1", c.id);
      fuzz::check(p.kind == OpKind::Brgemm || (p.batch == 1 && !p.accumulate), "a gemm with batch or beta", c.id);
    }
    for (int count : {1, 2, 3, 16}) {
      std::size_t covered = 0;
      for (int index = 1; index <= count; ++index) covered += casesOfShard(suite.cases, Shard{index, count}).size();
      fuzz::check(covered == suite.cases.size(), "shards that do not cover the suite once");
    }
  });
  return 0;
}
