#!/usr/bin/env bash
# Performance regression gate: runs suites/gate.yaml (mlir and libxsmm) at each
# ISA level the host has among avx2 and avx512-bf16, and compares it with the
# committed baseline of that level (results/gate/). The gate is relative: each
# row's speed as a ratio to libxsmm in the same run, so it holds across runs on
# a noisy machine; 20% is far above this machine's A/A spread (README.md,
# "Regression gate") and far below a lost nanokernel (30x). At avx2 libxsmm has
# no bf16 kernels, so only the fp32 cases (which it has) are gated there: a row
# without a libxsmm ratio would be judged on absolute times, which differ
# between machines.
#   scripts/perf-gate.sh            compare; exit 1 on a regression
#   scripts/perf-gate.sh --update   rewrite the baselines from this host
# Expects a built tree (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
nkbench=build/harness/cli/nkbench
baselines=results/gate
update=false
[[ "${1:-}" == "--update" ]] && update=true
mkdir -p out "$baselines"
status=0
for isa in avx2 avx512-bf16; do
  if ! "$nkbench" list --isa "$isa" >/dev/null 2>&1; then
    echo "perf gate: this host lacks $isa: not gated"
    continue
  fi
  run="out/gate-$isa.json"
  filter='.'
  [[ $isa == avx2 ]] && filter='^(brgemm|gemm)-'
  "$nkbench" run --suite suites/gate.yaml --isa "$isa" --filter "$filter" --backends mlir,libxsmm --reps 9 \
    --min-time 0.05 --quiet --json "$run" >/dev/null
  if $update; then
    cp "$run" "$baselines/gate-$isa.json"
    echo "perf gate: baseline $baselines/gate-$isa.json updated"
    continue
  fi
  echo "perf gate, $isa:"
  "$nkbench" compare "$baselines/gate-$isa.json" "$run" --threshold 0.2 --json "out/gate-$isa-compare.json" ||
    status=$?
done
exit "$status"
