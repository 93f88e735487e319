#!/usr/bin/env bash
# Performance regression gate: runs mlir and libxsmm at each ISA level the host
# has among avx2, avx512-bf16 and amx, and compares the run with that level's
# committed baseline, results/gate/gate-LEVEL.json. The gate is relative: each
# row's speed as a ratio to libxsmm in the same run, so it holds across runs on
# a noisy machine; 20% is far above this machine's A/A spread (README.md,
# "Regression gate") and far below a lost nanokernel (30x). A row without a
# libxsmm ratio would be judged on absolute times, which differ between
# machines, so each level gates only cases libxsmm runs:
#   avx2         suites/gate.yaml's fp32 cases (libxsmm has no bf16 there)
#   avx512-bf16  suites/gate.yaml
#   amx          suites/gate-amx.yaml: bf16 on the tile kernels (fp32 under an
#                amx cap runs avx512-bf16's code); libxsmm 1.17 has no AMX and
#                runs its bf16 at avx512-bf16, still the yardstick. A suite of
#                its own, as gate.yaml's two bf16 cases are both on the tile
#                grid: it adds a block off the grid (edge tiles, K padding) and
#                a GEMM, and leaves gate.yaml's baselines as they are. Without
#                a committed gate-amx.json an AMX host says so and passes.
#   scripts/perf-gate.sh                     compare; exit 1 on a regression that
#                                            three runs in a row show
#   scripts/perf-gate.sh --update [LEVEL...] rewrite the baselines of these
#                                            levels (default all) from this host
# Expects a configured tree (scripts/setup.sh), which it brings up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
nkbench=build/harness/cli/nkbench
[[ -f build/build.ninja || -f build/Makefile ]] || { echo "perf gate: no build/ here: run scripts/setup.sh" >&2; exit 2; }
cmake --build build --target nkbench >/dev/null  # gate the code as it is, not an older binary
baselines=results/gate
levels=(avx2 avx512-bf16 amx)
update=false
if [[ "${1:-}" == "--update" ]]; then
  update=true
  shift
  for level in "$@"; do
    [[ " ${levels[*]} " == *" $level "* ]] || { echo "perf gate: unknown level '$level' (${levels[*]})" >&2; exit 2; }
  done
  if (($#)); then levels=("$@"); fi
fi
mkdir -p out "$baselines"
status=0
for isa in "${levels[@]}"; do
  # Only nkbench's refusal of the level means the host lacks it; any other
  # failure (a bad NKBENCH_TUNING or NKBENCH_HOST_CLASS, say) stops the gate.
  if ! refusal=$("$nkbench" list --isa "$isa" --tuning none 2>&1 >/dev/null); then
    if [[ $refusal == "nkbench: error: --isa $isa: "* ]]; then
      echo "perf gate: this host lacks $isa: not gated"
      continue
    fi
    echo "perf gate: nkbench list --isa $isa failed: $refusal" >&2
    exit 2
  fi
  baseline="$baselines/gate-$isa.json"
  if [[ $isa == amx ]] && ! $update && [[ ! -f $baseline ]]; then
    echo "perf gate: amx not gated: no baseline $baseline is committed (record it on an AMX host with scripts/perf-gate.sh --update amx)"
    continue
  fi
  run="out/gate-$isa.json"
  suite=suites/gate.yaml
  filter='.'
  case $isa in
    avx2) filter='^(brgemm|gemm)-' ;;
    amx) suite=suites/gate-amx.yaml ;;
  esac
  # The analytic schedules: the gate watches the code, not a tuning file of this machine.
  measure() {
    if ! "$nkbench" run --suite "$suite" --isa "$isa" --filter "$filter" --backends mlir,libxsmm --tuning none \
      --reps 9 --min-time 0.05 --quiet --json "$run" >"out/gate-$isa.txt" 2>&1; then
      cat "out/gate-$isa.txt" >&2
      echo "perf gate, $isa: the run failed (its table above)" >&2
      exit 1
    fi
  }
  measure
  if $update; then
    cp "$run" "$baseline"
    echo "perf gate: baseline $baseline updated"
    continue
  fi
  echo "perf gate, $isa:"
  # A regression must hold in fresh runs: the VMs have slow spells of a minute
  # or so in which the JIT's kernels lose up to a fifth against libxsmm's
  # (README.md, "Regression gate"). A real regression fails all three runs.
  verdict=0
  for attempt in 1 2 3; do
    verdict=0
    "$nkbench" compare "$baseline" "$run" --threshold 0.2 --json "out/gate-$isa-compare.json" || verdict=$?
    ((verdict == 1 && attempt < 3)) || break
    echo "perf gate, $isa: regressed in run $attempt of 3; measured again in 30 s"
    sleep 30
    measure
  done
  ((verdict == 0)) || status=$verdict
done
exit "$status"
