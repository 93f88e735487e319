#!/usr/bin/env bash
# The main job: set up, build, then run the default suite on this host and
# write the rows as CSV and JSON under out/. Extra arguments go to `nkbench run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mkdir -p out
stamp=$(date -u +%Y%m%dT%H%M%SZ)
build/harness/cli/nkbench run --suite suites/default.yaml \
  --out "out/default-$stamp.csv" --json "out/default-$stamp.json" "$@"
