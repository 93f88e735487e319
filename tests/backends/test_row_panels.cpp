// RowPanelBrgemm's threads: one panel per member of the team, each panel's
// calls and its finishing by the same member, and an error on any thread
// rethrown once the team has joined (an exception may not leave an OpenMP
// region).
#include <gtest/gtest.h>
#include <omp.h>

#include <memory>
#include <set>
#include <vector>

#include "harness/core/error.h"
#include "kernels/common/row_panels.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

// A panel kernel that records the thread of each call, and may throw.
struct PanelRecord {
  std::int64_t first_row = -1, rows = 0;
  int compute_thread = -1, finish_thread = -1;
};

class RecordingKernel final : public Kernel {
 public:
  RecordingKernel(PanelRecord& record, bool throws) : record_(record), throws_(throws) {}
  void compute() override {
    record_.compute_thread = omp_get_thread_num();
    if (throws_) throw Error("panel fault");
  }
  void finishCalls() override { record_.finish_thread = omp_get_thread_num(); }
  const KernelInfo& info() const override { return info_; }

 private:
  PanelRecord& record_;
  bool throws_;
  KernelInfo info_;
};

RowPanelBrgemm recordingPanels(const Problem& brgemm, std::int64_t rows, int threads,
                               std::vector<PanelRecord>& records, std::int64_t throwing_panel = -1) {
  static std::vector<float> a, b, c;
  a.assign(std::size_t(brgemm.batch * brgemm.m * brgemm.k), 0.0f);
  c.assign(std::size_t(brgemm.m * brgemm.n), 0.0f);
  records.assign(std::size_t((brgemm.m + rows - 1) / rows), {});
  std::size_t made = 0;
  return RowPanelBrgemm(
      brgemm, Operands{a.data(), b.data(), c.data()}, rows,
      [&](const Problem& panel, const Operands&) -> std::unique_ptr<Kernel> {
        PanelRecord& record = records[made];
        record.rows = panel.m;
        const bool throws = std::int64_t(made++) == throwing_panel;
        return std::make_unique<RecordingKernel>(record, throws);
      },
      threads);
}

TEST(RowPanelThreads, EachThreadComputesAndFinishesItsOwnPanel) {
  std::vector<PanelRecord> records;
  RowPanelBrgemm panels = recordingPanels(test::makeProblem(25, 8, 4, 2, false), 16, 2, records);
  panels.compute();
  panels.finishCalls();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].rows, 16);
  EXPECT_EQ(records[1].rows, 9);
  EXPECT_EQ(std::set<int>({records[0].compute_thread, records[1].compute_thread}), std::set<int>({0, 1}));
  for (const PanelRecord& record : records) EXPECT_EQ(record.finish_thread, record.compute_thread);
  EXPECT_EQ(panels.info().packing, "A -> 2 row panels of 16 rows (the last 9), shared out among 2 threads");
}

TEST(RowPanelThreads, OneThreadRunsEveryPanelOnTheCaller) {
  std::vector<PanelRecord> records;
  RowPanelBrgemm panels = recordingPanels(test::makeProblem(25, 8, 4, 2, false), 8, 1, records);
  panels.compute();
  ASSERT_EQ(records.size(), 4u);
  for (const PanelRecord& record : records) EXPECT_EQ(record.compute_thread, 0);
  EXPECT_EQ(panels.info().packing, "A -> 4 row panels of 8 rows (the last 1)");
}

TEST(RowPanelThreads, AnErrorOnAnyThreadIsRethrownAfterTheTeamJoins) {
  std::vector<PanelRecord> records;
  RowPanelBrgemm panels = recordingPanels(test::makeProblem(32, 8, 4, 2, false), 16, 2, records, 1);
  EXPECT_THROW(panels.compute(), Error);
  EXPECT_NE(records[0].compute_thread, -1);  // the other panel ran
}

}  // namespace
}  // namespace nkbench
