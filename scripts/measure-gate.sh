#!/usr/bin/env bash
# Measures how `nkbench compare` behaves on this machine (README.md, "Regression
# gate"): the false-alarm rate over A/A comparisons (the same build run several
# times, every pair compared) and whether it catches a real 10% slowdown (the
# AVX2 4x16 register block instead of the default 6x16, on the fp32 cases).
#   scripts/measure-gate.sh [RUNS]     (default 5 runs per side)
set -euo pipefail
cd "$(dirname "$0")/.."
nkbench=build/harness/cli/nkbench
runs=${1:-5}
dir=out/measure-gate
cmake --build build --target nkbench >/dev/null  # the code as it is
rm -rf "$dir"  # runs of an earlier call or build would count with this one's
mkdir -p "$dir"
gate_run() {  # gate_run OUT.json [extra run options...]
  local out=$1
  shift
  "$nkbench" run --suite suites/gate.yaml --backends mlir,libxsmm --tuning none --reps 9 --min-time 0.05 --quiet \
    --json "$out" "$@" \
    >/dev/null
}
# Regressed mlir rows / compared mlir rows over every ordered pair of runs A, B.
count() {  # count THRESHOLD A-PREFIX B-PREFIX
  local threshold=$1 a=$2 b=$3 regressed=0 compared=0
  for base in "$dir"/"$a"-*.json; do
    for new in "$dir"/"$b"-*.json; do
      [[ "$base" == "$new" ]] && continue
      local report
      report=$("$nkbench" compare "$base" "$new" --threshold "$threshold" || true)
      regressed=$((regressed + $(grep -c ' mlir .*REGRESSED' <<<"$report" || true)))
      compared=$((compared + $(grep -cE ' mlir .*(REGRESSED|unchanged|improved)' <<<"$report" || true)))
    done
  done
  echo "$regressed/$compared"
}
for i in $(seq "$runs"); do
  gate_run "$dir/aa-$i.json"
  gate_run "$dir/fast-$i.json" --isa avx2 --filter '^(brgemm|gemm)'
  gate_run "$dir/slow-$i.json" --isa avx2 --filter '^(brgemm|gemm)' --schedule avx2.f32.4x16
done
echo "threshold  A/A false alarms (regressed/compared)  10% slowdown caught (regressed/compared)"
for threshold in 0.05 0.10 0.20; do
  echo "$threshold       $(count "$threshold" aa aa)                                $(count "$threshold" fast slow)"
done
