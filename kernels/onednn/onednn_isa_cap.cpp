#include "kernels/onednn/onednn_isa_cap.h"

#include <fmt/format.h>

#include <dnnl.hpp>

namespace nkbench::onednn {
namespace {

dnnl::cpu_isa toDnnlIsa(Isa cap) {
  switch (cap) {
    case Isa::Avx2: return dnnl::cpu_isa::avx2;
    case Isa::Avx512: return dnnl::cpu_isa::avx512_core;
    case Isa::Avx512Bf16:
    case Isa::AmxEmulated: return dnnl::cpu_isa::avx512_core_bf16;
    case Isa::Amx: return dnnl::cpu_isa::avx512_core_amx;
  }
  return dnnl::cpu_isa::avx2;
}

std::string isaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::all: return "all";
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  }
  return fmt::format("isa 0x{:x}", static_cast<unsigned>(isa));
}

// oneDNN ISA values are feature bit sets: a level is within a cap when it adds no bits.
bool isWithin(dnnl::cpu_isa isa, dnnl::cpu_isa cap) {
  return (static_cast<unsigned>(isa) & ~static_cast<unsigned>(cap)) == 0;
}

struct ProcessCap {
  Isa first;      // the cap asked for first, the one oneDNN keeps
  bool accepted;  // whether oneDNN took it
  dnnl::cpu_isa effective;
};

const ProcessCap& processCap(Isa first_cap) {
  static const ProcessCap cap = [first_cap] {
    const bool accepted = dnnl::set_max_cpu_isa(toDnnlIsa(first_cap)) == dnnl::status::success;
    return ProcessCap{first_cap, accepted, dnnl::get_effective_cpu_isa()};
  }();
  return cap;
}

}  // namespace

std::optional<std::string> applyIsaCap(Isa cap) {
  const ProcessCap& process = processCap(cap);
  // Above the cap: the run would not honour it. At a lower first cap that bound
  // oneDNN: the host may offer more, and oneDNN would be shown below its best.
  const bool exceeds = !isWithin(process.effective, toDnnlIsa(cap));
  const bool held_below = cap > process.first && process.effective == toDnnlIsa(process.first);
  if (!exceeds && !held_below) return std::nullopt;
  return fmt::format("oneDNN's ISA is fixed per process at {} and cannot follow the {} cap{}",
                     isaName(process.effective), toString(cap),
                     process.accepted ? "" : " (set_max_cpu_isa was refused)");
}

std::string effectiveIsa() { return isaName(dnnl::get_effective_cpu_isa()); }

}  // namespace nkbench::onednn
