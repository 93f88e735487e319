// Row panels in one line for tests: heights and threads, as "8@0+9@1".
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "kernels/common/row_panels.h"

namespace nkbench::test {

inline std::string rowPanelLayout(const std::vector<RowPanel>& panels) {
  std::string text;
  for (const RowPanel& panel : panels) text += fmt::format("{}{}@{}", text.empty() ? "" : "+", panel.rows, panel.thread);
  return text;
}

}  // namespace nkbench::test
