#!/usr/bin/env bash
# Regenerates results/HOST/: the paper suite on every backend (fp32 and bf16
# cases in two runs, so that each has its own table), the printed tables, and
# the figures. HOST defaults to a name made from the CPU model.
#   scripts/paper-results.sh [HOST] [extra `nkbench run` options...]
# About 10 minutes on 2 cores; run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
nkbench=build/harness/cli/nkbench
# HOST is the first argument unless that is already an option for `nkbench run`.
if [[ $# -gt 0 && $1 != -* ]]; then
  host=$1
  shift
else
  host=$("$nkbench" list | sed -n 's/^host: \(.*\) (.*/\1/p' | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/-$//')
fi
dir="results/$host"
mkdir -p "$dir"
for part in f32 bf16; do
  filter='^bf16-'
  [[ $part == f32 ]] && filter='^(brgemm|gemm)-'
  "$nkbench" run --suite suites/paper.yaml --filter "$filter" --reps 10 --quiet \
    --out "$dir/paper-$part.csv" --json "$dir/paper-$part.json" "$@" | tee "$dir/paper-$part.txt"
done
/usr/bin/python3 scripts/plot_results.py "$dir/paper-f32.json" "$dir/paper-bf16.json" --out "$dir/plots"
