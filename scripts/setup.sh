#!/usr/bin/env bash
# Installs nkbench's build dependencies (Debian 12 packages) and builds it into
# build/. Safe to re-run: apt is skipped when everything is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ git pkg-config
  llvm-22-dev libmlir-22-dev mlir-22-tools     # MLIR 22 and its LLVM (bookworm-security)
  libxsmm-dev                                  # libxsmm 1.17 baseline
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers  # oneDNN 2.6 (its CMake config needs OpenCL)
  libeigen3-dev                                # Eigen baseline and reference
  libbenchmark-dev libgtest-dev googletest     # timing engine, tests
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  python3-matplotlib                           # scripts/plot_results.py (run with /usr/bin/python3)
  libbenchmark-tools python3-scipy python3-numpy  # google/benchmark's compare.py, tested on --benchmark-json
)

scripts/install-packages.sh "${packages[@]}"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
