#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang-14, ASan + UBSan) into
# build-fuzz/ and runs each for SECONDS (default 60), starting from seeds made
# from the committed suites, reports and fuzz/option_seeds.txt. Exits non-zero
# on the first finding (crash, hang, leak, sanitizer report, broken property);
# the input is kept as build-fuzz/findings/TARGET-*. New inputs accumulate in
# build-fuzz/corpus/ across local runs.
#   scripts/fuzz.sh [SECONDS]   NKBENCH_FUZZ_TARGETS="fuzz_suite" picks targets.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=build-fuzz
targets=(${NKBENCH_FUZZ_TARGETS:-fuzz_suite fuzz_report fuzz_options fuzz_tuning})

scripts/install-packages.sh clang-14 libclang-rt-14-dev cmake ninja-build python3 \
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libeigen3-dev libbenchmark-dev

cmake -S fuzz -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$build" -j "$(nproc)"

# Seeds are made anew from the repository each run rather than committed twice.
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds/fuzz_suite" "$seeds/fuzz_report" "$seeds/fuzz_options" "$seeds/fuzz_tuning" "$build/findings"
cp suites/*.yaml "$seeds/fuzz_suite/"
python3 fuzz/report_seeds.py "$seeds/fuzz_report" results
n=0
while IFS= read -r line; do printf '%s' "$line" >"$seeds/fuzz_options/seed-$((n++))"; done <fuzz/option_seeds.txt

cp fuzz/tuning_seed_v*.json "$seeds/fuzz_tuning/"
# Inputs that once found a bug stay seeds, so the fuzzers start from them again.
for found in fuzz/regressions/*/*; do cp "$found" "$seeds/$(basename "$(dirname "$found")")/"; done
declare -A max_len=([fuzz_suite]=8192 [fuzz_report]=8192 [fuzz_options]=256 [fuzz_tuning]=8192)
declare -A dict=([fuzz_suite]=suite.dict [fuzz_report]=report.dict [fuzz_options]=options.dict [fuzz_tuning]=tuning.dict)
for target in "${targets[@]}"; do
  mkdir -p "$build/corpus/$target"
  echo "fuzz: $target for ${seconds}s"
  # libFuzzer's own output goes to a log; its last lines say what it found.
  if ! "$build/$target" -max_total_time="$seconds" -max_len="${max_len[$target]}" -timeout=10 -rss_limit_mb=2048 \
      -dict="fuzz/${dict[$target]}" -artifact_prefix="$build/findings/$target-" -print_final_stats=1 \
      "$build/corpus/$target" "$seeds/$target" >"$build/$target.log" 2>&1; then
    tail -n 40 "$build/$target.log"
    echo "fuzz: $target found a bad input: $(ls "$build/findings/$target-"* 2>/dev/null | head -n 1)"
    exit 1
  fi
  grep -E '^stat::number_of_executed_units|^Done ' "$build/$target.log" | tr '\n' ' '
  echo
done
echo "fuzz: ${#targets[@]} targets clean after ${seconds}s each"
