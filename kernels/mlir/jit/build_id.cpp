#include "kernels/mlir/jit/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

namespace nkbench::mlir_backend {
namespace {

// The NT_GNU_BUILD_ID note of a loaded object, as hex; empty where it has none.
std::string noteBuildId(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info.dlpi_phdr[i];
    if (header.p_type != PT_NOTE) continue;
    const auto* note = reinterpret_cast<const unsigned char*>(info.dlpi_addr + header.p_vaddr);
    const unsigned char* end = note + header.p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) nhdr;
      std::memcpy(&nhdr, note, sizeof nhdr);
      const unsigned char* name = note + sizeof nhdr;
      const unsigned char* desc = name + ((nhdr.n_namesz + 3) & ~3u);
      if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + nhdr.n_descsz <= end)
        return llvm::toHex(llvm::ArrayRef<uint8_t>(desc, nhdr.n_descsz), true);
      note = desc + ((nhdr.n_descsz + 3) & ~3u);
    }
  }
  return "";
}

std::string fileHash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  const auto digest =
      llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  return "sha256:" + llvm::toHex(digest, true);
}

}  // namespace

bool isCompilerLibrary(std::string_view file_name) {
  return file_name.rfind("libLLVM", 0) == 0 || file_name.rfind("libMLIR", 0) == 0;
}

const std::string& compilerBuildId() {
  static const std::string ids = [] {
    std::string text;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* out) -> int {
          auto& ids_so_far = *static_cast<std::string*>(out);
          // The main program comes first, with an empty name.
          const bool main_program = ids_so_far.empty();
          const std::string path = main_program ? "/proc/self/exe" : info->dlpi_name ? info->dlpi_name : "";
          const std::string name = std::filesystem::path(path).filename().string();
          if (!main_program && !isCompilerLibrary(name)) return 0;
          std::string id = noteBuildId(*info);
          if (id.empty()) id = fileHash(path);
          ids_so_far += main_program ? "exe:" + id : " " + name + ":" + id;
          return 0;
        },
        &text);
    return text;
  }();
  return ids;
}

}  // namespace nkbench::mlir_backend
