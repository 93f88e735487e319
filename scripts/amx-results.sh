#!/usr/bin/env bash
# Runs the AMX suite (suites/amx.yaml) on every backend under --isa amx and
# writes results/HOST/amx.{csv,json,txt} and its figures into
# results/HOST/plots-amx/ (not plots/: on an AMX host paper-results.sh runs at
# amx too, and its figures and ratios.md there have the same names). On a host
# without AMX nkbench refuses --isa amx (naming what is missing) and this script
# stops there; NKBENCH_AMX_ISA=amx-emulated runs the same suite on any
# avx512-bf16 host to verify the tile kernels (results/HOST/amx-emulated.*, no
# figures: emulated timings are not AMX performance).
#   scripts/amx-results.sh [HOST] [extra `nkbench run` options...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
nkbench=build/harness/cli/nkbench
isa=${NKBENCH_AMX_ISA:-amx}
case $isa in amx | amx-emulated) ;; *) echo "NKBENCH_AMX_ISA=$isa: expected amx or amx-emulated" >&2; exit 2 ;; esac
host=${1:-$("$nkbench" list | sed -n 's/^host: \(.*\) (.*/\1/p' | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/-$//')}
shift || true
dir="results/$host"
name=amx
[[ $isa == amx-emulated ]] && name=amx-emulated
# Refused before anything runs when the host lacks AMX; nothing is written then.
"$nkbench" run --suite suites/amx.yaml --isa "$isa" --filter '^amx-brgemm-7x33x5-b1$' --backends mlir --reps 1 \
  --min-time 0.01 --quiet >/dev/null
mkdir -p "$dir"
"$nkbench" run --suite suites/amx.yaml --isa "$isa" --reps 10 --quiet \
  --out "$dir/$name.csv" --json "$dir/$name.json" "$@" | tee "$dir/$name.txt"
if [[ $isa == amx ]]; then
  /usr/bin/python3 scripts/plot_results.py "$dir/$name.json" --out "$dir/plots-amx"
fi
