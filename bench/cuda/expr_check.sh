#!/usr/bin/env bash
# Expressions on cuda, checked on a GPU machine without network access, in one go:
# configure for the GPU at hand, build, ew-info (must say "expressions on cuda: yes"),
# the expression tests that need a GPU (tests/expr's cuda/* cases bit for bit against the
# scalar backend, ew_cuda_expr_tests, the missing-NVRTC case), compute-sanitizer memcheck
# and racecheck on a filtered run, then ew-cuda-expr-bench (generated kernels against
# cub::DeviceTransform with the same functor, the unfused fixed ops and ew::add at
# 2^10..2^28; first-compile, disk-cache and per-call times; the cost of untagged operands,
# `--call-cost`, also run alone with --no-bench) and ew-roofline's expressions section on
# cuda (fused, unfused, cub peer; JSON and SVG), then again on f32, f16 and bf16 data (the
# cub peer on __half and __nv_bfloat16 arrays: widen, the float formula, round once). The cuda/* cases
# include 16-bit data: random expressions with f16/bf16 inputs and outputs, the seven ops
# written as expressions on f16/bf16, every 16-bit pattern widened and every rounding edge
# narrowed (cuda/ExprFloat16Backends). Logs go to $OUT (default ./out).
# With KOKKOS_ROOT=<a CUDA-enabled Kokkos install> (shared libraries, Kokkos >= 4.7.01 for
# CUDA 13) a second build, build-gpu-kokkos, runs the expression tests on kokkos on the GPU
# (tests/expr's kokkos/* cases, the walk's tests, on the host and, WalksOnTheGpu, on the GPU,
# ew_kokkos_tests; the reductions' kokkos/* cases and their warp kernels' own tests; memcheck
# of the random expressions and of the reductions' warp kernels, memcheck and racecheck of WalksOnTheGpu,
# whose tile and staged walks use shared memory) and
# ew-roofline's expressions section with kokkos and cuda side by side.
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   [KOKKOS_ROOT=/opt/kokkos-cuda] bash bench/cuda/expr_check.sh [--no-bench] [--kokkos-only] [extra CMake arguments]
# --kokkos-only skips the cuda build and its checks (the kokkos build still benchmarks
# against the cuda backend, in the same run).
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
kokkos_only=0
while [[ ${1:-} == --no-bench || ${1:-} == --kokkos-only ]]; do
  [[ $1 == --no-bench ]] && bench=0 || kokkos_only=1
  shift
done

if (( ! kokkos_only )); then
  step configure
  bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF "$@" || exit 1
  export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  # A cache of this run's own, so the first-compile figures are first compiles.
  export EW_CACHE_DIR=$out/expr-cache
  rm -rf "$EW_CACHE_DIR"

  step build
  targets=(ew-info ew_expr_tests ew_cuda_expr_tests ew_cuda_expr_codegen_tests ew_cuda_tests ew-cuda-expr-bench)
  (( bench )) && targets+=(ew-roofline)
  cmake --build build-gpu -j 16 --target "${targets[@]}" > "$out/expr-build.log" 2>&1 || { tail -60 "$out/expr-build.log"; exit 1; }

  step ew-info
  build-gpu/tools/ew-info | tee "$out/expr-ew-info.log"
  grep -q "expressions on cuda: yes" "$out/expr-ew-info.log" || status=1

  step "ctest: expressions on the GPU, and the codegen/cache tests"
  ctest --test-dir build-gpu -R "^cuda/Expr|CudaExpr|CudaNvrtc|CudaPointerKind" --output-on-failure -j 4 --timeout 900 \
    > "$out/expr-ctest.log" 2>&1 || status=1
  tail -15 "$out/expr-ctest.log"
  grep -E "sm_[0-9]+: first compile|back to back" -r build-gpu/Testing/Temporary/LastTest.log | head -4

  for tool in memcheck racecheck; do
    step "compute-sanitizer --tool $tool"
    {
      sanitize $tool build-gpu/tests/expr/ew_expr_tests 'cuda/ExprAliasing.*:cuda/ExprSpecial.*:cuda/ExprEqualsOp.*:cuda/ExprFloat16Backends.*'
      sanitize $tool build-gpu/tests/cuda/ew_cuda_expr_tests 'CudaExpr.EveryMemorySpace*'
    } > "$out/expr-$tool.log" 2>&1
    sanitized "$out/expr-$tool.log"
  done

  if (( bench )); then
    step ew-cuda-expr-bench
    build-gpu/bench/cuda/ew-cuda-expr-bench --csv "$out/expr-bench.csv" > "$out/expr-bench.log" 2>&1 || status=1
    cat "$out/expr-bench.log"
    step "ew-roofline: expressions on cuda (fused, unfused, cub::DeviceTransform)"
    build-gpu/bench/roofline/ew-roofline --only-expressions --backends cuda --json "$out/expr-roofline.json" \
      --plot "$out/expr-roofline.svg" > "$out/expr-roofline.log" 2>&1 || status=1
    sed -n '/^expressions:/,$p' "$out/expr-roofline.log"
    grep -E "warning|not available" "$out/expr-roofline.log" && status=1
    step "ew-roofline: expressions on cuda, f32 beside f16 and bf16 (elements/s; fused against unfused)"
    build-gpu/bench/roofline/ew-roofline --only-expressions --backends cuda --dtypes f32,f16,bf16 \
      --json "$out/expr-roofline-16.json" > "$out/expr-roofline-16.log" 2>&1 || status=1
    sed -n '/^expressions:/,$p' "$out/expr-roofline-16.log"
    grep -E "warning|not available" "$out/expr-roofline-16.log" && status=1
  else
    step "ew-cuda-expr-bench --call-cost (untagged operands)"
    build-gpu/bench/cuda/ew-cuda-expr-bench --call-cost 2>&1 | tee "$out/expr-call-cost.log" || status=1
  fi
fi

if [[ -n ${KOKKOS_ROOT:-} ]]; then
  step "configure build-gpu-kokkos against $KOKKOS_ROOT"
  bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF \
    -DKokkos_ROOT="$KOKKOS_ROOT" "$@" || exit 1
  export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  step "build (kokkos)"
  ktargets=(ew-info ew_expr_tests ew_kokkos_tests ew_kokkos_expr_device_tests ew_reduce_tests
            ew_kokkos_reduce_device_tests ew_kokkos_init_application_first ew_kokkos_init_library_first
            ew_kokkos_init_exit ew_kokkos_failed_launch_tests)
  (( bench )) && ktargets+=(ew-roofline)
  cmake --build build-gpu-kokkos -j 16 --target "${ktargets[@]}" > "$out/expr-kokkos-build.log" 2>&1 ||
    { tail -60 "$out/expr-kokkos-build.log"; exit 1; }
  build-gpu-kokkos/tools/ew-info | tee "$out/expr-kokkos-ew-info.log"
  grep -Eq "kokkos +usable .*Cuda" "$out/expr-kokkos-ew-info.log" || { echo "kokkos does not run on Cuda"; status=1; }
  step "ctest: kokkos on the GPU (expressions, reductions)"
  ctest --test-dir build-gpu-kokkos -L kokkos -LE huge --output-on-failure -j 4 \
    --timeout 900 > "$out/expr-kokkos-ctest.log" 2>&1 || status=1
  tail -15 "$out/expr-kokkos-ctest.log"
  step "compute-sanitizer memcheck: kokkos expressions"
  timeout -k 10 600 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/expr/ew_expr_tests \
    --gtest_filter='kokkos/ExprRandom.*n1000*:kokkos/ExprLargest.*:kokkos/ExprAliasing.*' --gtest_brief=1 \
    > "$out/expr-kokkos-memcheck.log" 2>&1 || { echo "FAILED: memcheck (rc $?)"; status=1; }
  grep -E "SUMMARY|tests ran|FAILED" "$out/expr-kokkos-memcheck.log"
  # The reductions' warp kernels (no shared memory: memcheck alone), their grids capped and full.
  step "compute-sanitizer memcheck: kokkos reductions"
  timeout -k 10 600 compute-sanitizer --tool memcheck --error-exitcode 7 \
    build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 \
    > "$out/reduce-kokkos-memcheck.log" 2>&1 || { echo "FAILED: memcheck (rc $?)"; status=1; }
  grep -q "2 tests from" "$out/reduce-kokkos-memcheck.log" || { echo "FAILED: memcheck ran no reduction test"; status=1; }
  grep -E "SUMMARY|tests ran|FAILED" "$out/reduce-kokkos-memcheck.log"
  # The walks on the GPU (the tile walk asked for, and the chosen ones), whose tile and staged
  # walks use shared memory; the walk's other tests run on the host.
  for tool in memcheck racecheck; do
    step "compute-sanitizer $tool: the walks on the GPU"
    timeout -k 10 600 compute-sanitizer --tool $tool --error-exitcode 7 \
      build-gpu-kokkos/tests/kokkos/ew_kokkos_expr_device_tests --gtest_filter='KokkosExprLanes.WalksOnTheGpu' \
      --gtest_brief=1 > "$out/expr-kokkos-walks-$tool.log" 2>&1 || { echo "FAILED: $tool (rc $?)"; status=1; }
    grep -q "1 test from" "$out/expr-kokkos-walks-$tool.log" || { echo "FAILED: $tool ran no test"; status=1; }
    grep -E "SUMMARY|tests? ran|FAILED" "$out/expr-kokkos-walks-$tool.log"
  done
  if (( bench )); then
    step "ew-roofline: expressions, kokkos and cuda on the GPU (same run)"
    build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends cuda,kokkos \
      --json "$out/expr-roofline-kokkos.json" --plot "$out/expr-roofline-kokkos.svg" \
      > "$out/expr-roofline-kokkos.log" 2>&1 || status=1
    sed -n '/^expressions:/,$p' "$out/expr-roofline-kokkos.log"
  fi
fi
exit $status
