#include "kernels/common/row_panels.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include <omp.h>

#include "harness/core/error.h"
#include "harness/core/memory/guarded_buffer.h"

namespace nkbench {
namespace {

constexpr std::int64_t kPanelAlignment = 64;  // each panel starts on a cache line
constexpr std::int64_t kPageBytes = 4096;

std::int64_t roundUpToPages(std::int64_t bytes) { return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes; }

// The first byte of [from, to) in `bytes` that is not the canary, or `to`.
// Compared a page at a time (memcmp), as unpack() runs in every pack_ms
// measurement and the stretches around C panels span 64 KiB and more: byte by
// byte, the scan alone took ten times the pack of a 32x32x32 b32 BRGEMM.
std::int64_t firstNonCanary(const std::byte* bytes, std::int64_t from, std::int64_t to) {
  static const std::array<std::byte, kPageBytes> canaries = [] {
    std::array<std::byte, kPageBytes> page;
    page.fill(std::byte{kCanaryByte});
    return page;
  }();
  for (std::int64_t at = from; at < to; at += kPageBytes) {
    const std::int64_t length = std::min(kPageBytes, to - at);
    if (std::memcmp(bytes + at, canaries.data(), std::size_t(length)) == 0) continue;
    for (std::int64_t byte = at; byte < at + length; ++byte)
      if (bytes[byte] != std::byte{kCanaryByte}) return byte;
  }
  return to;
}

std::int64_t panelBytes(const RowPanel& panel, std::int64_t batch, std::int64_t k, std::int64_t element_bytes) {
  const std::int64_t bytes = batch * panel.rows * k * element_bytes;
  return (bytes + kPanelAlignment - 1) / kPanelAlignment * kPanelAlignment;
}

// body(i) for each panel, on the team member its `thread` names where more
// than one thread (a team the runtime made smaller shares the missing
// members' panels out, so that every panel runs). An exception may not leave
// an OpenMP region: the first is rethrown after it.
template <class Body>
void forEachPanel(const std::vector<RowPanel>& panels, int threads, Body&& body) {
  if (threads <= 1) {
    for (std::size_t i = 0; i < panels.size(); ++i) body(i);
    return;
  }
  std::exception_ptr first_error;
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads();
    const int member = omp_get_thread_num();
    for (std::size_t i = 0; i < panels.size(); ++i) {
      if (panels[i].thread % team != member) continue;
      try {
        body(i);
      } catch (...) {
#pragma omp critical(nkbench_row_panel_error)
        if (!first_error) first_error = std::current_exception();
      }
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace

std::vector<RowPanel> rowPanels(std::int64_t m, std::int64_t rows) {
  if (m < 1 || rows < 1) throw Error(fmt::format("row panels: {} rows in panels of {}", m, rows));
  std::vector<RowPanel> panels;
  for (std::int64_t first = 0; first < m; first += rows) panels.push_back({first, std::min(rows, m - first)});
  return panels;
}

std::vector<RowPanel> cutRowPanels(const std::vector<RowPanel>& panels, std::int64_t most_rows,
                                   std::int64_t multiple) {
  if (most_rows < 1) throw Error(fmt::format("row panels: panels of at most {} rows", most_rows));
  std::vector<RowPanel> pieces;
  for (const RowPanel& panel : panels) {
    const std::int64_t count = (panel.rows + most_rows - 1) / most_rows;
    std::int64_t rows = (panel.rows + count - 1) / count;
    // Still at most most_rows where that is a multiple (as the callers' are).
    if (most_rows >= multiple) rows = (rows + multiple - 1) / multiple * multiple;
    for (std::int64_t first = 0; first < panel.rows; first += rows)
      pieces.push_back({panel.first_row + first, std::min(rows, panel.rows - first), panel.thread});
  }
  return pieces;
}

Problem panelProblem(const Problem& brgemm, const RowPanel& panel) {
  Problem part = brgemm;
  part.m = panel.rows;
  return part;
}

std::optional<std::string> panelRefusal(const Problem& brgemm, const std::vector<RowPanel>& panels, int threads,
                                        const std::function<std::optional<std::string>(const Problem&)>& check) {
  for (const RowPanel& panel : panels)
    if (auto reason = check(panelProblem(brgemm, panel)))
      return fmt::format("{} (a row panel of {} on {} threads)", *reason, brgemm.describe(), threads);
  return std::nullopt;
}

std::string describeRowPanels(const std::vector<RowPanel>& panels) {
  std::vector<std::pair<std::int64_t, int>> runs;  // heights in order, with their counts
  for (const RowPanel& panel : panels) {
    if (runs.empty() || runs.back().first != panel.rows)
      runs.push_back({panel.rows, 1});
    else
      ++runs.back().second;
  }
  if (runs.size() == 1) return fmt::format("{} row panel{} of {} rows", panels.size(), panels.size() == 1 ? "" : "s",
                                           runs.front().first);
  std::string parts;
  for (const auto& [rows, count] : runs)
    parts += fmt::format("{}{} of {}{}", parts.empty() ? "" : ", ", count, rows, parts.empty() ? " rows" : "");
  return fmt::format("{} row panels ({})", panels.size(), parts);
}

std::int64_t rowPanelBytes(const std::vector<RowPanel>& panels, std::int64_t batch, std::int64_t k,
                           std::int64_t element_bytes) {
  std::int64_t total = 0;
  for (const RowPanel& panel : panels) total += panelBytes(panel, batch, k, element_bytes);
  return total;
}

std::int64_t cPanelGap(std::int64_t row_bytes) {
  return roundUpToPages(std::max(kCPanelGapBytes, kCPanelGapRows * row_bytes));
}

std::vector<std::int64_t> cPanelOffsets(const std::vector<RowPanel>& panels, std::int64_t row_bytes) {
  const std::int64_t gap = cPanelGap(row_bytes);
  std::vector<std::int64_t> offsets;
  std::int64_t next = kPageBytes;  // a canary page before the first
  for (const RowPanel& panel : panels) {
    offsets.push_back(next);
    next += roundUpToPages(panel.rows * row_bytes) + gap;
  }
  return offsets;
}

std::int64_t cPanelBytes(const std::vector<RowPanel>& panels, std::int64_t row_bytes) {
  if (panels.empty()) return 0;
  // A canary page after the last.
  return cPanelOffsets(panels, row_bytes).back() + roundUpToPages(panels.back().rows * row_bytes) + kPageBytes;
}

void packARowPanels(const void* a, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t element_bytes,
                    const std::vector<RowPanel>& panels, std::byte* panelled) {
  const auto* source = static_cast<const std::byte*>(a);
  const std::int64_t row_bytes = k * element_bytes;
  for (const RowPanel& panel : panels) {
    if (panel.first_row < 0 || panel.rows < 1 || panel.first_row + panel.rows > m)
      throw Error(fmt::format("row panels: rows {}..{} are outside M = {}", panel.first_row,
                              panel.first_row + panel.rows, m));
    for (std::int64_t s = 0; s < batch; ++s)
      std::memcpy(panelled + s * panel.rows * row_bytes, source + (s * m + panel.first_row) * row_bytes,
                  static_cast<std::size_t>(panel.rows * row_bytes));
    panelled += panelBytes(panel, batch, k, element_bytes);
  }
}

RowPanelBrgemm::RowPanelBrgemm(const Problem& brgemm, const Operands& operands, std::vector<RowPanel> panels,
                               const PanelKernelFactory& make_panel_kernel, int threads)
    : problem_(brgemm), operands_(operands), panels_(std::move(panels)), threads_(threads) {
  std::int64_t next_row = 0;
  for (const RowPanel& panel : panels_) {
    if (panel.first_row != next_row || panel.rows < 1 || panel.thread < 0 || panel.thread >= std::max(threads_, 1))
      throw Error(fmt::format("row panels: rows {}..{} on thread {} do not follow row {} of M = {} on {} threads",
                              panel.first_row, panel.first_row + panel.rows, panel.thread, next_row, brgemm.m,
                              threads_));
    next_row += panel.rows;
  }
  if (next_row != brgemm.m || panels_.empty())
    throw Error(fmt::format("row panels: {} rows of M = {} covered", next_row, brgemm.m));
  // The panel kernels read A from the panelled copy: allocated here, once, filled by pack().
  a_panels_.assign(
      static_cast<std::size_t>(rowPanelBytes(panels_, problem_.batch, problem_.k, elementBytes(problem_.dtype))),
      std::byte{0});
  const std::int64_t c_row_bytes = cRowBytes();
  // On one thread the panels run in turn, and write C's own rows.
  if (threads_ > 1) {
    c_offsets_ = cPanelOffsets(panels_, c_row_bytes);
    c_panels_.assign(static_cast<std::size_t>(cPanelBytes(panels_, c_row_bytes)), std::byte{kCanaryByte});
  }
  const std::byte* a_panel = a_panels_.data();
  for (std::size_t i = 0; i < panels_.size(); ++i) {
    std::byte* c = c_panels_.empty() ? static_cast<std::byte*>(operands_.c) + panels_[i].first_row * c_row_bytes
                                     : c_panels_.data() + c_offsets_[i];
    kernels_.push_back(make_panel_kernel(panelProblem(problem_, panels_[i]), Operands{a_panel, operands_.b, c}));
    a_panel += panelBytes(panels_[i], problem_.batch, problem_.k, elementBytes(problem_.dtype));
  }
  info_ = kernels_.front()->info();
  const std::string panelling =
      fmt::format("{} -> {}{}", c_panels_.empty() ? "A" : "A, C", describeRowPanels(panels_),
                  threads_ > 1 ? fmt::format(", shared out among {} threads", threads_) : std::string());
  info_.packing = info_.packing.empty() ? panelling : panelling + ", " + info_.packing;
}

void RowPanelBrgemm::pack() {
  packARowPanels(operands_.a, problem_.batch, problem_.m, problem_.k, elementBytes(problem_.dtype), panels_,
                 a_panels_.data());
  copyCPanels(CopyDirection::IntoPanels);
  for (const auto& kernel : kernels_) kernel->pack();
}

void RowPanelBrgemm::copyCPanels(CopyDirection direction) {
  if (c_panels_.empty()) return;
  const std::int64_t c_row_bytes = cRowBytes();
  auto* c = static_cast<std::byte*>(operands_.c);
  for (std::size_t i = 0; i < panels_.size(); ++i) {
    std::byte* rows = c + panels_[i].first_row * c_row_bytes;
    std::byte* panel = c_panels_.data() + c_offsets_[i];
    const auto bytes = static_cast<std::size_t>(panels_[i].rows * c_row_bytes);
    if (direction == CopyDirection::IntoPanels)
      std::memcpy(panel, rows, bytes);
    else
      std::memcpy(rows, panel, bytes);
  }
}

void RowPanelBrgemm::checkCPanelCanaries() const {
  if (c_panels_.empty()) return;
  const std::int64_t c_row_bytes = cRowBytes();
  // Each stretch between panels (and before the first, after the last) is
  // blamed on the nearer panel, by its farthest damaged byte from it.
  std::int64_t previous_end = 0;
  for (std::size_t i = 0; i <= panels_.size(); ++i) {
    const std::int64_t start = i < panels_.size() ? c_offsets_[i] : std::int64_t(c_panels_.size());
    const std::int64_t first = firstNonCanary(c_panels_.data(), previous_end, start);
    if (first < start) {
      std::int64_t last = start - 1;
      while (c_panels_[std::size_t(last)] == std::byte{kCanaryByte}) --last;
      const bool past_previous = i > 0 && (i == panels_.size() || first - previous_end < start - last);
      throw Error(past_previous
                      ? fmt::format("out of bounds: a write {} bytes past the end of C's row panel {} (rows {}..{})",
                                    last - previous_end + 1, i - 1, panels_[i - 1].first_row,
                                    panels_[i - 1].first_row + panels_[i - 1].rows)
                      : fmt::format("out of bounds: a write {} bytes before the start of C's row panel {} (rows {}..{})",
                                    start - first, i, panels_[i].first_row, panels_[i].first_row + panels_[i].rows));
    }
    if (i < panels_.size()) previous_end = start + panels_[i].rows * c_row_bytes;
  }
}

void RowPanelBrgemm::compute() {
  forEachPanel(panels_, threads_, [this](std::size_t i) { kernels_[i]->compute(); });
}

void RowPanelBrgemm::finishCalls() {
  forEachPanel(panels_, threads_, [this](std::size_t i) { kernels_[i]->finishCalls(); });
}

void RowPanelBrgemm::unpack() {
  for (const auto& kernel : kernels_) kernel->unpack();
  copyCPanels(CopyDirection::OutOfPanels);
  checkCPanelCanaries();
}

}  // namespace nkbench
