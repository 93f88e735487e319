#include "kernels/onednn/onednn_layout.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

namespace nkbench::onednn {

std::string describeLayout(const dnnl::memory::desc& desc) {
  const dnnl_memory_desc_t& md = desc.data;
  if (md.format_kind != dnnl_blocked) return "(opaque)";
  const dnnl_blocking_desc_t& blocking = md.format_desc.blocking;

  std::vector<int> outer(static_cast<std::size_t>(md.ndims));
  std::iota(outer.begin(), outer.end(), 0);
  std::stable_sort(outer.begin(), outer.end(),
                   [&](int x, int y) { return blocking.strides[x] > blocking.strides[y]; });

  const auto isBlocked = [&](int dim) {
    return std::find(blocking.inner_idxs, blocking.inner_idxs + blocking.inner_nblks, dim) !=
           blocking.inner_idxs + blocking.inner_nblks;
  };
  std::string tag;
  for (int dim : outer) tag += static_cast<char>((isBlocked(dim) ? 'A' : 'a') + dim);
  for (int block = 0; block < blocking.inner_nblks; ++block)
    tag += fmt::format("{}{}", blocking.inner_blks[block],
                       static_cast<char>('a' + blocking.inner_idxs[block]));
  return tag;
}

}  // namespace nkbench::onednn
