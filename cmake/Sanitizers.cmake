# NKBENCH_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer over all of
# nkbench's own code (harness, backend glue, reference, tests), set before any
# target so that every library and executable gets it. UBSan does not recover:
# a finding ends the process, so it fails its test. float-cast-overflow is UB
# that -fsanitize=undefined leaves out in GCC. _GLIBCXX_SANITIZE_VECTOR makes
# libstdc++ mark a vector's spare capacity, so reads past size() are caught too.
# Prebuilt libraries (LLVM/MLIR, oneDNN, libxsmm, Google Benchmark, yaml-cpp)
# stay uninstrumented and JIT code is made at run time: ASan intercepts their
# malloc and free but does not check their loads and stores.
option(NKBENCH_SANITIZE "Build with ASan and UBSan (scripts/test-sanitizers.sh)" OFF)
if(NKBENCH_SANITIZE)
  set(nk_sanitize_flags -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options(${nk_sanitize_flags})
  add_compile_definitions(_GLIBCXX_SANITIZE_VECTOR)
  add_link_options(${nk_sanitize_flags})
  message(STATUS "Sanitizers: ${nk_sanitize_flags}")
endif()
