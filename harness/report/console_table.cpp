#include "harness/report/console_table.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace nkbench {
namespace {

constexpr std::size_t kMaxNoteLength = 110;

enum class Align { Left, Right };

struct Column {
  std::string_view title;
  Align align;
};

constexpr std::array<Column, 12> kColumns = {{
    {"case", Align::Left},
    {"backend", Align::Left},
    {"isa", Align::Left},
    {"used", Align::Left},
    {"block", Align::Left},
    {"median GFLOPS", Align::Right},
    {"best", Align::Right},
    {"%peak", Align::Right},
    {"x libxsmm", Align::Right},
    {"compile ms", Align::Right},
    {"pack ms", Align::Right},
    {"status", Align::Left},
}};

using Cells = std::array<std::string, kColumns.size()>;

Cells cellsOf(const ResultRow& row) {
  const bool timed = row.timed();
  const auto if_timed = [timed](std::string text) { return timed ? text : std::string("-"); };
  // A skipped backend never got as far as compiling or packing.
  const bool ran = row.status != VerifyStatus::Skipped;
  const auto if_ran = [ran](std::string text) { return ran ? text : std::string("-"); };
  return {
      row.threads > 1 ? fmt::format("{} ({} threads)", row.case_id, row.threads) : row.case_id,
      row.backend,
      row.isa.empty() ? "-" : row.isa,
      row.isa_used.empty() ? "-" : row.isa_used,
      row.register_block.empty() ? "-" : row.register_block,
      if_timed(fmt::format("{:.2f}", row.median_gflops)),
      if_timed(fmt::format("{:.2f}", row.best_gflops)),
      if_timed(fmt::format("{:.1f}", 100.0 * row.peak_fraction)),
      timed && row.ratio_to_libxsmm ? fmt::format("{:.2f}", *row.ratio_to_libxsmm) : "-",
      if_ran(fmt::format("{:.1f}", row.compile_ms)),
      if_ran(fmt::format("{:.3f}", row.pack_ms)),
      std::string(toString(row.status)) + (timed && row.noisy ? " (noisy)" : ""),
  };
}

// One line, at most kMaxNoteLength characters: the table stays readable;
// the full note is in the CSV and JSON reports.
std::string shortNote(const std::string& note) {
  std::string line;
  for (char c : note) {
    const bool space = c == '\n' || c == '\r' || c == '\t';
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.size() > kMaxNoteLength) line = line.substr(0, kMaxNoteLength - 3) + "...";
  return line;
}

std::string formatLine(const Cells& cells, const std::array<std::size_t, kColumns.size()>& widths) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += "  ";
    line += kColumns[i].align == Align::Left ? fmt::format("{:<{}}", cells[i], widths[i])
                                             : fmt::format("{:>{}}", cells[i], widths[i]);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string formatSuite(const std::string& suite, const std::vector<const ResultRow*>& rows) {
  std::vector<Cells> cells;
  std::array<std::size_t, kColumns.size()> widths{};
  for (std::size_t i = 0; i < kColumns.size(); ++i) widths[i] = kColumns[i].title.size();
  for (const ResultRow* row : rows) {
    cells.push_back(cellsOf(*row));
    for (std::size_t i = 0; i < kColumns.size(); ++i) {
      widths[i] = std::max(widths[i], cells.back()[i].size());
    }
  }

  Cells titles;
  std::size_t table_width = 2 * (kColumns.size() - 1);
  for (std::size_t i = 0; i < kColumns.size(); ++i) {
    titles[i] = std::string(kColumns[i].title);
    table_width += widths[i];
  }

  std::string out = fmt::format("suite: {}\n", suite.empty() ? "-" : suite);
  out += formatLine(titles, widths);
  out += std::string(table_width, '-') + "\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (r > 0 && rows[r]->case_id != rows[r - 1]->case_id) out += "\n";
    out += formatLine(cells[r], widths);
    if (rows[r]->status != VerifyStatus::Passed && !rows[r]->note.empty()) {
      out += fmt::format("    note: {}\n", shortNote(rows[r]->note));
    }
  }
  return out;
}

}  // namespace

std::string formatTable(const std::vector<ResultRow>& rows) {
  std::vector<std::string> suite_order;
  for (const ResultRow& row : rows) {
    if (std::find(suite_order.begin(), suite_order.end(), row.suite) == suite_order.end()) {
      suite_order.push_back(row.suite);
    }
  }
  std::string out;
  for (const std::string& suite : suite_order) {
    std::vector<const ResultRow*> suite_rows;
    for (const ResultRow& row : rows) {
      if (row.suite == suite) suite_rows.push_back(&row);
    }
    if (!out.empty()) out += "\n";
    out += formatSuite(suite, suite_rows);
  }
  return out;
}

std::string formatRowCounts(const std::vector<ResultRow>& rows) {
  const auto count = [&rows](VerifyStatus status) {
    return std::count_if(rows.begin(), rows.end(), [status](const ResultRow& row) { return row.status == status; });
  };
  const auto errors = count(VerifyStatus::Error), mistrusted = count(VerifyStatus::Mistrusted);
  std::string counts = fmt::format("{} rows: {} passed, {} failed, {} skipped", rows.size(),
                                   count(VerifyStatus::Passed), count(VerifyStatus::Failed),
                                   count(VerifyStatus::Skipped));
  // Results that could not be trusted (e.g. ReLU zeroed nearly all), and errors
  // (a crash, a timeout, a backend's exception), apart from wrong results.
  if (mistrusted > 0) counts += fmt::format(", {} mistrusted", mistrusted);
  if (errors > 0) counts += fmt::format(", {} error{}", errors, errors == 1 ? "" : "s");
  return counts;
}

}  // namespace nkbench
