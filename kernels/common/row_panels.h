// A BRGEMM computed as row panels of C, each a BRGEMM of its own: for threads,
// which take a panel each (thread_split.h), and for kernels whose per-call
// working set grows with M x N (the mlir kernels keep the f32 sum of a bf16 C
// on their stack).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"
#include "kernels/backend.h"
#include "operands/bf16.h"

namespace nkbench {

// Rows [first_row, first_row + rows) of C, computed by member `thread` of
// the OpenMP team.
struct RowPanel {
  std::int64_t first_row = 0, rows = 0;
  int thread = 0;
};

// The panels of `rows` rows (the last one shorter) that cover M, on thread 0;
// throws Error when M or `rows` is below 1.
std::vector<RowPanel> rowPanels(std::int64_t m, std::int64_t rows);

// Each panel cut into as few equal panels as hold at most `most_rows` rows,
// in whole multiples of `multiple` rows where `most_rows` holds one (pass a
// `most_rows` that is a multiple of it, or the pieces may be taller); each
// piece keeps its panel's thread. Throws Error when `most_rows` is below 1.
std::vector<RowPanel> cutRowPanels(const std::vector<RowPanel>& panels, std::int64_t most_rows,
                                   std::int64_t multiple);

// The BRGEMM of `panel`'s rows of `brgemm`.
Problem panelProblem(const Problem& brgemm, const RowPanel& panel);

// The first refusal `check` gives a panel's BRGEMM, naming the case it is a
// panel of on `threads` threads; nullopt when it refuses none.
std::optional<std::string> panelRefusal(const Problem& brgemm, const std::vector<RowPanel>& panels, int threads,
                                        const std::function<std::optional<std::string>(const Problem&)>& check);

// "2 row panels of 32 rows", "2 row panels (1 of 8 rows, 1 of 9)".
std::string describeRowPanels(const std::vector<RowPanel>& panels);

// A [batch][M][K] -> per panel a contiguous [batch][rows][K], each panel starting
// on a cache line after the one before (elements of `element_bytes` bytes), into
// `panelled`, which holds rowPanelBytes(...). Throws Error for a panel outside M.
std::int64_t rowPanelBytes(const std::vector<RowPanel>& panels, std::int64_t batch, std::int64_t k,
                           std::int64_t element_bytes);
void packARowPanels(const void* a, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t element_bytes,
                    const std::vector<RowPanel>& panels, std::byte* panelled);

// Where each panel's C rows sit in the buffer of C panels: page-aligned, after
// a canary page, apart by at least kCPanelGapBytes and kCPanelGapRows rows (of
// row_bytes each), and followed by another canary page. A core's prefetchers
// run ahead of its kernel's row bands, past the last band of its panel; with
// the next thread's rows there, they pull in lines that thread keeps writing
// (see RowPanelBrgemm). On the Zen 5-class VM 8 KiB apart still lost 16-20%
// in its slow spells, 32 KiB and more nothing.
inline constexpr std::int64_t kCPanelGapBytes = 64 * 1024;
inline constexpr std::int64_t kCPanelGapRows = 32;
std::vector<std::int64_t> cPanelOffsets(const std::vector<RowPanel>& panels, std::int64_t row_bytes);
// Bytes of the buffer cPanelOffsets lays out.
std::int64_t cPanelBytes(const std::vector<RowPanel>& panels, std::int64_t row_bytes);

// B in VNNI pairs shared by the row panels of one BRGEMM, which all read the
// whole of it: packed by the panel whose `packs` is set. No pairs: each kernel
// packs its own.
struct SharedVnniB {
  std::shared_ptr<BFloat16Buffer> pairs;
  bool packs = true;
};

// Hands each panel of one BRGEMM its share of one B: the first packs it.
class PanelsSharedVnniB {
 public:
  SharedVnniB next() { return {pairs_, std::exchange(first_, false)}; }

 private:
  std::shared_ptr<BFloat16Buffer> pairs_ = std::make_shared<BFloat16Buffer>();
  bool first_ = true;
};

// One kernel per panel, each on its packed A panel, the shared B and, on more
// threads, its packed C panel, as a blocked layout gives each thread its own C
// blocks (on one thread, its rows of C). pack() packs A's panels and C's (C's
// values: beta 1's addend, beta 0's unwritten marker), then runs each panel
// kernel's own pack; compute() runs the panel kernels, on a team of `threads`
// OpenMP threads where more than one, each panel on the member its `thread`
// names, in every call, and its finishCalls() too, where the kernel releases
// what its calls hold, such as AMX tiles (amx/tile_state.h covers an OS thread
// that is not the one that made the calls); unpack() runs them in order, copies
// the C panels back into C and throws Error where a kernel wrote around its
// panel (the canary bytes around the panels are damaged), as C's guards would
// have caught it. C panels apart, not C's own contiguous rows:
// kernels that revisit C at every batch entry (mlir's single-entry batch
// chunks) ran at 0.60-0.74x libxsmm on 2 threads on the Zen 5-class VM, in
// spells, when each thread's prefetcher pulled in the other's rows; with the
// panels apart, at 0.99-1.00x in the same minutes.
class RowPanelBrgemm final : public Kernel {
 public:
  using PanelKernelFactory = std::function<std::unique_ptr<Kernel>(const Problem& panel, const Operands& operands)>;
  RowPanelBrgemm(const Problem& brgemm, const Operands& operands, std::vector<RowPanel> panels,
                 const PanelKernelFactory& make_panel_kernel, int threads = 1);
  void pack() override;
  void compute() override;
  void unpack() override;
  void finishCalls() override;
  const KernelInfo& info() const override { return info_; }

 private:
  enum class CopyDirection { IntoPanels, OutOfPanels };
  void copyCPanels(CopyDirection direction);
  void checkCPanelCanaries() const;
  std::int64_t cRowBytes() const { return problem_.n * elementBytes(problem_.c_dtype); }

  Problem problem_;
  Operands operands_;
  std::vector<RowPanel> panels_;
  AlignedBuffer<std::byte> a_panels_;
  std::vector<std::byte, AlignedAllocator<std::byte, 4096>> c_panels_;  // page-aligned, as its panels
  std::vector<std::int64_t> c_offsets_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  KernelInfo info_;
  int threads_;
};

}  // namespace nkbench
