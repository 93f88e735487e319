#!/usr/bin/env bash
# ASan + UBSan build of nkbench and its tests (build-asan/, NKBENCH_SANITIZE=ON,
# see cmake/Sanitizers.cmake), then ctest under it, less the tests listed in
# `excluded` below. Every process's ASan report goes to a file under
# build-asan/sanitizer-logs: a report fails this script even where it came from
# an nkbench child whose exit code a test expected to be non-zero (ASan exits 1,
# the code of a failed row). Nothing is suppressed.
# What it covers and what it cannot (JIT code): README.md, "Testing and CI".
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/harness/cli/nkbench ]] || scripts/setup.sh  # installs the packages

# -O2 as in Release, line tables (-g1) for the reports' stack traces.
cmake -S . -B build-asan -G Ninja -DNKBENCH_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
cmake --build build-asan -j "$(nproc)"

# Left out, as ctest -E patterns:
excluded=(
  # The MLIR backend's shape sweeps: bit-exactness of JIT kernels over dozens of
  # shapes. Their time goes to LLVM (uninstrumented) and JIT code (outside ASan);
  # the mlir glue they would add is run on small shapes by MlirStructure,
  # MlirBf16C*, AmxKernels, TileCalls and the Cli tests, which stay.
  '^Shapes/(MlirKernels|MlirBf16Kernels|MlirBf16C|AmxEmulation)\.'
  # Python only: nothing instrumented runs.
  '^plot_results$'
)
exclude_regex=$(IFS='|'; echo "${excluded[*]}")

logs=build-asan/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"
logs=$(realpath "$logs")
# Stricter than the defaults: use of a returned frame's stack, globals read
# before their initialiser ran, string functions read to the terminator.
# handle_sigfpe=0: the crash-isolation tests make a kernel (the faulty backend,
# standing in for JIT code) divide by zero on purpose and check that the parent
# names SIGFPE; ASan's own handler would turn that into a report and exit 1
# first. A SIGFPE in nkbench itself still kills its test or errors its row.
# (SIGSEGV and SIGBUS need nothing: the runner's child installs its own handler,
# which ASan lets take over.)
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:strict_string_checks=1:handle_sigfpe=0:log_path='$logs/asan'"  # quoted: the path may hold spaces
# GCC 12's UBSan inside the ASan runtime ignores log_path and reports on stderr
# only, so a finding exits with a status of its own, 99, which no test expects.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99"

status=0
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300 -E "$exclude_regex" || status=1
reports=("$logs"/*)
if [[ -e ${reports[0]} ]]; then
  echo "sanitizers: ${#reports[@]} report(s) in $logs:"
  for report in "${reports[@]}"; do echo "== $report"; cat "$report"; done
  status=1
fi
exit "$status"
