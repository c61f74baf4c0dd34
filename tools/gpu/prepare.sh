#!/usr/bin/env bash
# On the GPU machine: unpack .deps/*.deb into /opt/ewdeps (never into /), show the
# GPU, and configure a build of the project for the GPU at hand in $1 (default
# build-gpu) with any further CMake arguments. .deps/ comes from tools/gpu/fetch_deps.sh,
# run where the network is reachable. Usage, from the repository root on the GPU machine:
#   bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF && cmake --build build-gpu -j
set -euo pipefail
build=${1:-build-gpu}
shift || true
source "$(dirname "$0")/unpack_deps.sh"
ew_unpack_deps .deps
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader || true
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" \
  -DEW_ENABLE_CUDA=ON "$@" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
grep -A8 "backends:" "$build.configure.log" || true
