#!/usr/bin/env bash
# Runs the whole test suite once per host class this host can stand in for:
# NKBENCH_HOST_CLASS masks the CPU down to avx2, avx512 and avx512-bf16 (see
# README, "Host classes"), so every class's routes, skips and refusals run here.
# A class above the host is reported and skipped: a mask never adds features.
# The unmasked run is scripts/test.sh. Usage: scripts/test-host-classes.sh [CLASS...]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/harness/cli/nkbench ]] || scripts/setup.sh

classes=("$@")
((${#classes[@]})) || classes=(avx2 avx512 avx512-bf16)
failed=()
for class in "${classes[@]}"; do
  if ! NKBENCH_HOST_CLASS="$class" build/harness/cli/nkbench list --isa "$class" >/dev/null 2>&1; then
    echo "host class $class: skipped, this host lacks it"
    continue
  fi
  echo "host class $class: ctest with NKBENCH_HOST_CLASS=$class"
  NKBENCH_HOST_CLASS="$class" ctest --test-dir build --output-on-failure -j "$(nproc)" || failed+=("$class")
done
if ((${#failed[@]})); then
  echo "host classes with failing tests: ${failed[*]}"
  exit 1
fi
