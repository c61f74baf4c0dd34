#!/usr/bin/env bash
# Launch tunings measured against their peers in one run, on a GPU machine without network
# access: the generated expression kernel's (ew-cuda-expr-bench --variants: vector or bulk-copy
# kernel, the bulk tiles' bytes in flight; clamp, silu and add against cub::DeviceTransform
# with the same functor, 2^24..2^28, bits checked), then the reductions in their device-result
# form twice, back to back on one array and on copies away from L2 (--cold), against
# cub::DeviceReduce, cuBLAS and the non-reproducible atomic variant. Highway and Kokkos are
# off (the cuda backend alone is measured). Logs and CSV files go to $OUT (default ./out).
# About 3 minutes on an H200.
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/launch_variants.sh [--expr-only | --reduce-only] [extra CMake arguments]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
expr=1 reduce=1
case ${1:-} in
  --expr-only) reduce=0; shift ;;
  --reduce-only) expr=0; shift ;;
esac

step configure
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_TESTS=OFF "$@" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
step build
cmake --build build-gpu -j 16 --target ew-cuda-expr-bench ew-cuda-reduce-bench > "$out/variants-build.log" 2>&1 ||
  { tail -60 "$out/variants-build.log"; exit 1; }

if (( expr )); then
  step "ew-cuda-expr-bench --variants 2^24..2^28"
  build-gpu/bench/cuda/ew-cuda-expr-bench --variants --sizes 24:28 --csv "$out/expr-variants.csv" \
    > "$out/expr-variants.log" 2>&1 || status=1
  cat "$out/expr-variants.log"
fi
if (( reduce )); then
  b=build-gpu/bench/cuda/ew-cuda-reduce-bench
  step "ew-cuda-reduce-bench --device-result 2^24..2^28, one array"
  $b --device-result --sizes 24..28 --reps 15 --csv "$out/reduce-warm.csv" > "$out/reduce-warm.log" 2>&1 || status=1
  cat "$out/reduce-warm.log"
  step "ew-cuda-reduce-bench --device-result --cold 2^24..2^28, copies away from L2"
  $b --device-result --cold --sizes 24..28 --reps 15 --csv "$out/reduce-cold.csv" > "$out/reduce-cold.log" 2>&1 || status=1
  cat "$out/reduce-cold.log"
fi
exit $status
