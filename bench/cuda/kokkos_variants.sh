#!/usr/bin/env bash
# The kokkos walk's shapes for small register files in several builds on a GPU machine
# without network access: each variant NAME=DEFINES builds the library with those
# definitions (the EW_KOKKOS_*_REGISTER_GROUPS and _BLOCKS overrides of
# backends/kokkos/expr_device.hpp, GROUPS 0: those programs take the small-file walk;
# EW_KOKKOS_STAGED 0: no walk through shared memory, 1: staged on every device, 2 (the
# default): by the device's bandwidth per SM; EW_KOKKOS_STAGED_DEPTH its slots) and runs
# ew-roofline's expressions with kokkos beside cuda, the same run, warm, at $SIZES (default
# 24,26,28) with $ROOFLINE_ARGS (for example --expressions silu). The register counts of the
# walk's kernels go with each variant's log (cuobjdump). KOKKOS_ROOT: a CUDA-enabled Kokkos
# install. Logs go to $OUT.
# About 50 s a variant on an H200 host (the reconfigure rebuilds the C++ sources).
# Usage, from the repository root:
#   KOKKOS_ROOT=/opt/kokkos-cuda bash bench/cuda/kokkos_variants.sh \
#     before="-DEW_KOKKOS_ONE_REGISTER_GROUPS=0" two="-DEW_KOKKOS_TWO_REGISTER_GROUPS=2"
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
: "${KOKKOS_ROOT:?a CUDA-enabled Kokkos install}"
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for variant in "$@"; do
  name=${variant%%=*} defines=${variant#*=}
  step "variant $name: $defines"
  bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF \
    -DKokkos_ROOT="$KOKKOS_ROOT" \
    "-DCMAKE_CXX_FLAGS=$defines" > /dev/null || exit 1
  cmake --build build-gpu-kokkos -j 16 --target ew-roofline > "$out/variant-$name-build.log" 2>&1 ||
    { tail -30 "$out/variant-$name-build.log"; status=1; continue; }
  cuobjdump -res-usage build-gpu-kokkos/backends/kokkos/CMakeFiles/ew_backend_kokkos.dir/backend.cpp.o 2>&1 |
    grep --no-group-separator -A1 -E "Function.*(Lane|Tile)Expr" | paste - - |
    sed -E 's/.*((Lane|Tile)ExprI[a-z]Li[0-9]+E(Li[0-9]+E)?(Lb[01]E)?).*(REG:[0-9]+ STACK:[0-9]+).*/\1 \5/' | sort -u |
    tee "$out/variant-$name-registers.txt"
  build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends cuda,kokkos --sizes "${SIZES:-24,26,28}" \
    --warm ${ROOFLINE_ARGS:-} > "$out/variant-$name-roofline.txt" 2>&1 || status=1
  sed -n '/^expr /,$p' "$out/variant-$name-roofline.txt"
done
exit $status
