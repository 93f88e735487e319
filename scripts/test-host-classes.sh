#!/usr/bin/env bash
# Runs the whole test suite once per host class this host can stand in for:
# NKBENCH_HOST_CLASS masks the CPU down to avx2, avx512 and avx512-bf16 (see
# README, "Host classes"), so every class's routes, skips and refusals run here.
# A class above the host is reported and skipped: a mask never adds features.
# The unmasked run is scripts/test.sh. Usage: scripts/test-host-classes.sh [CLASS...]
set -euo pipefail
cd "$(dirname "$0")/.."
known=(avx2 avx512 avx512-bf16 amx)
classes=("$@")
((${#classes[@]})) || classes=(avx2 avx512 avx512-bf16)
for class in "${classes[@]}"; do
  [[ " ${known[*]} " == *" $class "* ]] || { echo "unknown host class '$class' (${known[*]})" >&2; exit 2; }
done
# The tests as they are now, not an older build of them.
if [[ -f build/build.ninja || -f build/Makefile ]]; then cmake --build build; else scripts/setup.sh; fi

failed=()
for class in "${classes[@]}"; do
  # Only nkbench's refusal of the level means the host lacks it; any other failure stops here.
  if ! refusal=$(NKBENCH_HOST_CLASS="$class" build/harness/cli/nkbench list --isa "$class" 2>&1 >/dev/null); then
    if [[ $refusal == "nkbench: error: --isa $class: "* ]]; then
      echo "host class $class: skipped, this host lacks it"
      continue
    fi
    echo "host class $class: nkbench list failed: $refusal" >&2
    exit 2
  fi
  echo "host class $class: ctest with NKBENCH_HOST_CLASS=$class"
  NKBENCH_HOST_CLASS="$class" ctest --test-dir build --output-on-failure -j "$(nproc)" || failed+=("$class")
done
if ((${#failed[@]})); then
  echo "host classes with failing tests: ${failed[*]}"
  exit 1
fi
