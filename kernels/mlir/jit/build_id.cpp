#include "kernels/mlir/jit/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

namespace nkbench::mlir_backend {
namespace {

// The NT_GNU_BUILD_ID note of the main program (the first object dl_iterate_phdr reports).
std::string noteBuildId() {
  std::string id;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) -> int {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type != PT_NOTE) continue;
          const auto* note = reinterpret_cast<const unsigned char*>(info->dlpi_addr + header.p_vaddr);
          const unsigned char* end = note + header.p_memsz;
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) nhdr;
            std::memcpy(&nhdr, note, sizeof nhdr);
            const unsigned char* name = note + sizeof nhdr;
            const unsigned char* desc = name + ((nhdr.n_namesz + 3) & ~3u);
            if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
                desc + nhdr.n_descsz <= end) {
              *static_cast<std::string*>(out) = llvm::toHex(llvm::ArrayRef<uint8_t>(desc, nhdr.n_descsz), true);
              return 1;
            }
            note = desc + ((nhdr.n_descsz + 3) & ~3u);
          }
        }
        return 1;  // only the main program
      },
      &id);
  return id;
}

std::string executableHash() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  const auto digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  return "sha256:" + llvm::toHex(digest, true);
}

}  // namespace

const std::string& executableBuildId() {
  static const std::string id = [] {
    std::string note = noteBuildId();
    return note.empty() ? executableHash() : note;
  }();
  return id;
}

}  // namespace nkbench::mlir_backend
