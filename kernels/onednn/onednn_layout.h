// Names a oneDNN memory layout the way oneDNN's format tags do, for the report.
#pragma once

#include <string>

#include <dnnl.hpp>

namespace nkbench::onednn {

// "BA16a64b (a=K, b=N)"-style: outer dimensions from the largest stride down,
// upper case where a dimension is blocked, then the inner blocks.
std::string describeLayout(const dnnl::memory::desc& desc);

}  // namespace nkbench::onednn
