// RowPanelBrgemm's threads: one panel per member of the team, each panel's
// calls and its finishing by the same member, and an error on any thread
// rethrown once the team has joined (an exception may not leave an OpenMP
// region).
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
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

RowPanelBrgemm recordingPanels(const Problem& brgemm, const std::vector<RowPanel>& panels, int threads,
                               std::vector<PanelRecord>& records, std::int64_t throwing_panel = -1) {
  static std::vector<float> a, b, c;
  a.assign(std::size_t(brgemm.batch * brgemm.m * brgemm.k), 0.0f);
  c.assign(std::size_t(brgemm.m * brgemm.n), 0.0f);
  records.assign(panels.size(), {});
  std::size_t made = 0;
  return RowPanelBrgemm(
      brgemm, Operands{a.data(), b.data(), c.data()}, panels,
      [&](const Problem& panel, const Operands&) -> std::unique_ptr<Kernel> {
        PanelRecord& record = records[made];
        record.rows = panel.m;
        const bool throws = std::int64_t(made++) == throwing_panel;
        return std::make_unique<RecordingKernel>(record, throws);
      },
      threads);
}

TEST(RowPanelThreads, EachThreadComputesAndFinishesItsOwnPanels) {
  std::vector<PanelRecord> records;
  // Two panels on member 1, one on member 0, out of the order of the members.
  const std::vector<RowPanel> panels = {{0, 8, 1}, {8, 8, 1}, {16, 9, 0}};
  RowPanelBrgemm kernel = recordingPanels(test::makeProblem(25, 8, 4, 2, false), panels, 2, records);
  kernel.compute();
  kernel.finishCalls();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].rows, 9);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].compute_thread, panels[i].thread) << i;
    EXPECT_EQ(records[i].finish_thread, panels[i].thread) << i;
  }
  EXPECT_EQ(kernel.info().packing, "A, C -> 3 row panels (2 of 8 rows, 1 of 9), shared out among 2 threads");
}

TEST(RowPanelThreads, OneThreadRunsEveryPanelOnTheCaller) {
  std::vector<PanelRecord> records;
  RowPanelBrgemm kernel = recordingPanels(test::makeProblem(25, 8, 4, 2, false), rowPanels(25, 8), 1, records);
  kernel.compute();
  ASSERT_EQ(records.size(), 4u);
  for (const PanelRecord& record : records) EXPECT_EQ(record.compute_thread, 0);
  EXPECT_EQ(kernel.info().packing, "A -> 4 row panels (3 of 8 rows, 1 of 1)");  // C's own rows, in turn
}

TEST(RowPanelThreads, AnErrorOnAnyThreadIsRethrownAfterTheTeamJoins) {
  std::vector<PanelRecord> records;
  RowPanelBrgemm kernel =
      recordingPanels(test::makeProblem(32, 8, 4, 2, false), {{0, 16, 0}, {16, 16, 1}}, 2, records, 1);
  EXPECT_THROW(kernel.compute(), Error);
  EXPECT_EQ(records[0].compute_thread, 0);  // the other panel ran
}

// With no active parallel level allowed, the runtime gives a team of one:
// that member runs every panel, none is left undone.
TEST(RowPanelThreads, ATeamSmallerThanAskedStillRunsEveryPanel) {
  std::vector<PanelRecord> records;
  RowPanelBrgemm kernel =
      recordingPanels(test::makeProblem(32, 8, 4, 2, false), {{0, 16, 0}, {16, 16, 1}}, 2, records);
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(0);
  kernel.compute();
  omp_set_max_active_levels(levels);
  for (const PanelRecord& record : records) EXPECT_EQ(record.compute_thread, 0);
}

// Panels must cover M in order, each on a member of the team.
TEST(RowPanelThreads, PanelsThatDoNotCoverMInOrderAreRefused) {
  std::vector<PanelRecord> records;
  const Problem brgemm = test::makeProblem(32, 8, 4, 2, false);
  EXPECT_THROW(recordingPanels(brgemm, {{0, 16, 0}, {8, 24, 1}}, 2, records), Error);   // overlap
  EXPECT_THROW(recordingPanels(brgemm, {{0, 16, 0}, {16, 8, 1}}, 2, records), Error);   // short of M
  EXPECT_THROW(recordingPanels(brgemm, {{0, 16, 0}, {16, 16, 2}}, 2, records), Error);  // no member 2
}


// A panel kernel that adds 1 to every element of its C, as a beta 1 BRGEMM adds
// its products, and keeps the address of its C.
class AddingKernel final : public Kernel {
 public:
  // first/end: the span of elements, from its C, that compute() adds to (by
  // default its own); a kernel that strays past its panel sets a wider one.
  AddingKernel(float* c, std::int64_t elements, const float*& seen) : AddingKernel(c, 0, elements, seen) {}
  AddingKernel(float* c, std::int64_t first, std::int64_t end, const float*& seen) : c_(c), first_(first), end_(end) {
    seen = c;
  }
  void compute() override {
    for (std::int64_t i = first_; i < end_; ++i) c_[i] += 1.0f;
  }
  const KernelInfo& info() const override { return info_; }

 private:
  float* c_;
  std::int64_t first_, end_;
  KernelInfo info_;
};

// Each panel's kernel writes a C panel of its own, page-aligned and apart by
// kCPanelGapBytes and kCPanelGapRows rows, not C's contiguous rows (a core's
// prefetchers running past its last band would take the next thread's);
// pack() brings C's values in and unpack() takes the sums back.
TEST(RowPanelThreads, EachPanelWritesItsOwnCPanelApartFromTheOthers) {
  const Problem brgemm = test::makeProblem(25, 16, 4, 2, true);
  std::vector<float> a(std::size_t(brgemm.batch * brgemm.m * brgemm.k)), b(1), c(std::size_t(brgemm.m * brgemm.n));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = float(i);
  const std::vector<RowPanel> panels = {{0, 8, 0}, {8, 17, 1}};
  std::vector<const float*> seen(panels.size(), nullptr);
  std::size_t made = 0;
  RowPanelBrgemm kernel(
      brgemm, Operands{a.data(), b.data(), c.data()}, panels,
      [&](const Problem& panel, const Operands& operands) -> std::unique_ptr<Kernel> {
        const std::size_t index = made++;
        return std::make_unique<AddingKernel>(static_cast<float*>(operands.c), panel.m * panel.n, seen[index]);
      },
      2);
  const std::int64_t row_bytes = brgemm.n * std::int64_t(sizeof(float));
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(seen[i]);
    EXPECT_EQ(address % 4096, 0u) << i;
    const bool inside_c = seen[i] >= c.data() && seen[i] < c.data() + c.size();
    EXPECT_FALSE(inside_c) << i;
    if (i > 0) {
      const auto previous_end = reinterpret_cast<std::uintptr_t>(seen[i - 1] + panels[i - 1].rows * brgemm.n);
      EXPECT_GE(address - previous_end, std::uintptr_t(std::max(kCPanelGapBytes, kCPanelGapRows * row_bytes))) << i;
    }
  }
  kernel.pack();
  kernel.compute();
  kernel.compute();
  kernel.unpack();
  for (std::size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], float(i) + 2.0f) << i;
}

// A panel kernel that writes around its C panel is caught at unpack(), named
// by the panel and the distance, as C's own guards would catch it in place.
TEST(RowPanelThreads, AWriteAroundACPanelIsCaughtAtUnpack) {
  const Problem brgemm = test::makeProblem(16, 16, 4, 2, true);
  const std::vector<RowPanel> panels = {{0, 8, 0}, {8, 8, 1}};
  struct Stray {
    std::int64_t panel, first, end;  // elements of that panel's C it adds to
    const char* message;
  };
  const std::int64_t panel_elements = 8 * 16;
  for (const Stray& stray :
       {Stray{0, 0, panel_elements + 1, "4 bytes past the end of C's row panel 0 (rows 0..8)"},
        Stray{1, -2, panel_elements, "8 bytes before the start of C's row panel 1 (rows 8..16)"},
        Stray{1, 0, panel_elements + 3, "12 bytes past the end of C's row panel 1 (rows 8..16)"},
        Stray{0, -1, panel_elements, "4 bytes before the start of C's row panel 0 (rows 0..8)"}}) {
    std::vector<float> a(std::size_t(brgemm.batch * brgemm.m * brgemm.k)), b(1), c(std::size_t(brgemm.m * brgemm.n));
    const float* seen = nullptr;
    std::int64_t made = 0;
    RowPanelBrgemm kernel(
        brgemm, Operands{a.data(), b.data(), c.data()}, panels,
        [&](const Problem& panel, const Operands& operands) -> std::unique_ptr<Kernel> {
          const bool strays = made++ == stray.panel;
          return std::make_unique<AddingKernel>(static_cast<float*>(operands.c), strays ? stray.first : 0,
                                                strays ? stray.end : panel.m * panel.n, seen);
        },
        2);
    kernel.pack();
    kernel.compute();
    try {
      kernel.unpack();
      ADD_FAILURE() << "no error for " << stray.message;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(stray.message), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace nkbench
