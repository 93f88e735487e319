#include "harness/core/isa.h"

#include "harness/core/host_class.h"

#include <cpuid.h>

#include <array>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nkbench {
namespace {

constexpr std::array kIsaLevels = {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::AmxEmulated, Isa::Amx};

struct CpuidRegisters {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// All zeros when the leaf is above what the CPU reports.
CpuidRegisters cpuid(unsigned leaf, unsigned subleaf = 0) {
  CpuidRegisters r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return {};
  return r;
}

bool bit(unsigned value, int index) { return (value >> index) & 1u; }

// XCR0: which register states the OS saves on a context switch.
std::uint64_t readXcr0() {
  std::uint32_t low = 0, high = 0;
  asm volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (std::uint64_t{high} << 32) | low;
}

std::string vendorString() {
  const CpuidRegisters r = cpuid(0);
  char text[13] = {};
  std::memcpy(text + 0, &r.ebx, 4);
  std::memcpy(text + 4, &r.edx, 4);
  std::memcpy(text + 8, &r.ecx, 4);
  return text;
}

std::string brandString() {
  if (cpuid(0x80000000).eax < 0x80000004) return {};
  char text[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    const CpuidRegisters r = cpuid(0x80000002 + i);
    std::memcpy(text + 16 * i + 0, &r.eax, 4);
    std::memcpy(text + 16 * i + 4, &r.ebx, 4);
    std::memcpy(text + 16 * i + 8, &r.ecx, 4);
    std::memcpy(text + 16 * i + 12, &r.edx, 4);
  }
  std::string brand = text;
  const auto first = brand.find_first_not_of(' ');
  const auto last = brand.find_last_not_of(' ');
  return first == std::string::npos ? std::string{} : brand.substr(first, last - first + 1);
}

// What the CPU itself implements for one level, beyond the level below it.
bool cpuImplements(Isa isa, const CpuFeatures& f) {
  switch (isa) {
    case Isa::Avx2: return f.avx2 && f.fma;
    case Isa::Avx512: return f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl;
    case Isa::Avx512Bf16: return f.avx512_bf16;
    case Isa::AmxEmulated: return true;  // vector code of the levels below
    case Isa::Amx: return f.amx_tile && f.amx_bf16;
  }
  return false;
}

// Whether the OS saves the registers that level adds.
bool osEnables(Isa isa, const CpuFeatures& f) {
  switch (isa) {
    case Isa::Avx2: return f.os_ymm_state;
    case Isa::Avx512: return f.os_zmm_state;
    case Isa::Avx512Bf16:
    case Isa::AmxEmulated: return true;  // same registers as Avx512
    case Isa::Amx: return f.os_tile_state && f.tile_permission.granted();
  }
  return false;
}

}  // namespace

std::string_view toString(Isa isa) {
  switch (isa) {
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Bf16: return "avx512-bf16";
    case Isa::AmxEmulated: return "amx-emulated";
    case Isa::Amx: return "amx";
  }
  return "?";
}

std::optional<Isa> parseIsa(std::string_view text) {
  for (Isa isa : kIsaLevels)
    if (text == toString(isa)) return isa;
  return std::nullopt;
}

// A level also requires every level below it: kernels built for it may use them.
bool CpuFeatures::has(Isa isa) const {
  for (Isa level : kIsaLevels) {
    if (!cpuImplements(level, *this) || !osEnables(level, *this)) return false;
    if (level == isa) return true;
  }
  return false;
}

std::vector<std::string> CpuFeatures::flagNames() const {
  const std::pair<bool, const char*> flags[] = {
      {avx2, "avx2"},           {fma, "fma"},
      {avx512f, "avx512f"},     {avx512bw, "avx512bw"},
      {avx512dq, "avx512dq"},   {avx512vl, "avx512vl"},
      {avx512_vnni, "avx512_vnni"}, {avx512_bf16, "avx512_bf16"},
      {amx_tile, "amx_tile"},   {amx_bf16, "amx_bf16"},
  };
  std::vector<std::string> names;
  for (const auto& [present, name] : flags)
    if (present) names.emplace_back(name);
  return names;
}

namespace {

// CPUID and XCR0 as they are, without a mask and without asking for permission.
CpuFeatures detectUnmaskedCpuFeatures() {
  CpuFeatures f;
  f.vendor = vendorString();
  f.brand = brandString();

  const unsigned max_leaf = cpuid(0).eax;
  const CpuidRegisters leaf1 = cpuid(1);
  f.fma = bit(leaf1.ecx, 12);
  const bool osxsave = bit(leaf1.ecx, 27);
  const bool avx = bit(leaf1.ecx, 28);

  if (max_leaf >= 7) {
    const CpuidRegisters leaf7 = cpuid(7, 0);
    f.avx2 = bit(leaf7.ebx, 5);
    f.avx512f = bit(leaf7.ebx, 16);
    f.avx512dq = bit(leaf7.ebx, 17);
    f.avx512bw = bit(leaf7.ebx, 30);
    f.avx512vl = bit(leaf7.ebx, 31);
    f.avx512_vnni = bit(leaf7.ecx, 11);
    f.amx_bf16 = bit(leaf7.edx, 22);
    f.amx_tile = bit(leaf7.edx, 24);
    if (leaf7.eax >= 1) f.avx512_bf16 = bit(cpuid(7, 1).eax, 5);
  }

  // XGETBV faults unless the OS set CR4.OSXSAVE, which CPUID reports.
  if (osxsave && avx) {
    const std::uint64_t xcr0 = readXcr0();
    const auto all = [xcr0](std::uint64_t mask) { return (xcr0 & mask) == mask; };
    f.os_ymm_state = all(0x6);                        // SSE + AVX
    f.os_zmm_state = all(0x6) && all(0xE0);           // + opmask, ZMM0-15 high, ZMM16-31
    f.os_tile_state = all((1u << 17) | (1u << 18));   // TILECFG + TILEDATA
  }
  return f;
}

}  // namespace

CpuFeatures detectCpuFeatures() {
  CpuFeatures f = detectUnmaskedCpuFeatures();
  if (const std::optional<Isa> host_class = hostClassFromEnvironment()) f = maskToHostClass(f, *host_class);
  if (f.amx_tile && f.amx_bf16 && f.os_tile_state) f.tile_permission = requestTileDataPermission();
  return f;
}

std::optional<std::string> amxUnavailableReason(const CpuFeatures& f) {
  if (!f.amx_tile) return "CPU lacks amx-tile";
  if (!f.amx_bf16) return "CPU lacks amx-bf16";
  if (!f.os_tile_state) return "the OS does not enable the AMX tile state (XCR0 bits 17-18)";
  if (!f.tile_permission.requested) return "XTILEDATA permission was not requested";
  if (f.tile_permission.error != 0)
    return fmt::format("the kernel refused XTILEDATA permission: {}", std::strerror(f.tile_permission.error));
  return std::nullopt;
}

std::optional<Isa> bestIsa(const CpuFeatures& features) {
  std::optional<Isa> best;
  for (Isa isa : kIsaLevels)
    if (isa != Isa::AmxEmulated && features.has(isa)) best = isa;
  return best;
}

std::optional<Isa> resolveIsa(std::optional<Isa> requested, const CpuFeatures& features,
                              std::string* error) {
  const auto hostFlags = [&features] {
    const std::vector<std::string> names = features.flagNames();
    const std::string masked =
        features.host_class.empty() ? "" : fmt::format("; {}={} masks the rest", kHostClassVariable, features.host_class);
    return (names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))) + masked;
  };
  if (!requested) {
    const std::optional<Isa> best = bestIsa(features);
    if (!best && error)
      *error = fmt::format("this host lacks avx2+fma, the lowest level nkbench runs (has: {})",
                           hostFlags());
    return best;
  }
  if (features.has(*requested)) return requested;
  if (error) {
    // Name the level the request trips over: the requested one or one below it.
    Isa missing = *requested;
    for (Isa level : kIsaLevels)
      if (!features.has(level)) {
        missing = level;
        break;
      }
    const bool only_os_lacks = cpuImplements(missing, features) && !osEnables(missing, features);
    const std::string has = only_os_lacks ? "" : fmt::format(" (has: {})", hostFlags());
    if (missing == Isa::Amx)
      *error = fmt::format("--isa {}: {}{}", toString(*requested), *amxUnavailableReason(features), has);
    else if (only_os_lacks)
      *error = fmt::format("--isa {}: the OS does not enable the {} register state on this host",
                           toString(*requested), toString(missing));
    else
      *error = fmt::format("--isa {}: this host lacks {}{}", toString(*requested), toString(missing), has);
  }
  return std::nullopt;
}

}  // namespace nkbench
