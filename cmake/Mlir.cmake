# LLVM/MLIR 22 (Debian llvm-22-dev, libmlir-22-dev). Link the shared libMLIR/libLLVM only:
# mixing in the static MLIR* targets would load a second copy of MLIR.
find_package(MLIR REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)
message(STATUS "MLIR: ${MLIR_DIR} (LLVM ${LLVM_PACKAGE_VERSION})")
add_library(nk_mlir INTERFACE)
target_include_directories(nk_mlir SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_compile_definitions(nk_mlir INTERFACE ${LLVM_DEFINITIONS})
target_link_directories(nk_mlir INTERFACE ${LLVM_LIBRARY_DIR})
target_link_libraries(nk_mlir INTERFACE MLIR LLVM)
set(NKBENCH_LLVM_VERSION "${LLVM_PACKAGE_VERSION}")
