#!/usr/bin/env bash
# The bulk tiles of the fixed ops (cub's 48 KiB in flight per SM) against the expressions'
# rule (bulk_tiles.hpp: 48 KiB on an H100, 69 KiB on an H200), on a GPU machine without
# network access: configure for the GPU at hand, build, the cuda tests that take the
# bulk-copy and the vector kernels at large sizes (every op, f32 and f64, against the scalar
# backend, guards untouched) and the expression tests, then ew-cuda-bench (every op against
# cub::DeviceTransform at 2^20..2^28; the kernel policies with the product's tiles, "bulk
# pdl", beside the rule's, "bulk rule pdl", in the same run) and ew-cuda-expr-bench
# --versus-add (a+b against ew::add, 2^10..2^28). Logs and CSV files go to $OUT (default
# ./out).
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/bulk_tiles_check.sh [--no-bench]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
if [[ ${1:-} == --no-bench ]]; then bench=0; shift; fi

step configure
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_TESTS=ON || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

step build
targets=(ew-info ew_cuda_tests ew_cuda_expr_tests)
(( bench )) && targets+=(ew-cuda-bench ew-cuda-expr-bench)
cmake --build build-gpu -j 16 --target "${targets[@]}" > "$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
build-gpu/tools/ew-info | tee "$out/info.log"

step "cuda tests: large arrays through both kernels, memory spaces, caller-allocated pointers"
build-gpu/tests/cuda/ew_cuda_tests --gtest_filter='Cuda.LargeArrays*:Cuda.ManagedMemory*:Cuda.CallerAllocated*:Cuda.SixtyFour*' \
  > "$out/cuda-tests.log" 2>&1 || status=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" "$out/cuda-tests.log"
grep -q "SKIPPED \]" "$out/cuda-tests.log" && { echo "cuda tests skipped: no usable GPU?"; status=1; }
step "cuda expression tests"
build-gpu/tests/cuda/ew_cuda_expr_tests > "$out/expr-tests.log" 2>&1 || status=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" "$out/expr-tests.log"
# (CudaExprChild and CudaExprNoNvrtc skip by design outside their own processes.)
grep -q "SKIPPED \] CudaExpr\." "$out/expr-tests.log" && { echo "GPU expression tests skipped: no usable GPU?"; status=1; }

if (( bench )); then
  step "ew-cuda-bench"
  build-gpu/bench/cuda/ew-cuda-bench --csv "$out/bench.csv" > "$out/bench.log" 2>&1 || status=1
  cat "$out/bench.log"
  step "ew-cuda-expr-bench --versus-add 2^10..2^28"
  build-gpu/bench/cuda/ew-cuda-expr-bench --versus-add --sizes 10:28 --csv "$out/versus-add.csv" \
    > "$out/versus-add.log" 2>&1 || status=1
  cat "$out/versus-add.log"
fi
exit $status
