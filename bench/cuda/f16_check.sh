#!/usr/bin/env bash
# f16 and bf16 on cuda, checked on a GPU machine without network access, in one go:
# configure for the GPU at hand, build, then
#   - the GPU tests of 16-bit data: tests/float16 on cuda (every pattern through ew::convert
#     and through every op, the rounding edges from f32 and f64, memory spaces, arrays large
#     enough for the bulk-copy kernel), the shared suite's f16/bf16 cases (and its f32/f64
#     cases: the kernels are shared), sharded arrays on 2+ GPUs where there are;
#   - compute-sanitizer memcheck and racecheck on a filtered run;
#   - ew-cuda-bench (every op and dtype against cub::DeviceTransform, 16-bit elements per
#     second over f32's, the kernel policies on 16-bit data);
#   - ew-roofline on cuda and its peers, f16, bf16 and f32, n = 2^20..2^28, cold cache.
# Logs go to $OUT (default ./out); the exit status is 1 when any step failed.
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/f16_check.sh [--no-bench] [extra CMake arguments]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
if [[ ${1:-} == --no-bench ]]; then bench=0; shift; fi

step configure
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF "$@" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

step build
targets=(ew-info ew_float16_tests ew_tests ew_sharded_tests ew_cuda_tests ew_cuda_multigpu_tests)
(( bench )) && targets+=(ew-cuda-bench ew-roofline)
cmake --build build-gpu -j 16 --target "${targets[@]}" > "$out/f16-build.log" 2>&1 || { tail -60 "$out/f16-build.log"; exit 1; }
build-gpu/tools/ew-info | tee "$out/f16-info.log"

step "ctest: 16-bit on the GPU, and the shared suite's cuda cases"
ctest --test-dir build-gpu -L gpu -R 'Float16|^cuda/(Ops|Aliasing|SpecialValues)\.|^Cuda\.|MultiGpu' \
  --output-on-failure -j 4 --timeout 900 > "$out/f16-ctest.log" 2>&1 || status=1
tail -15 "$out/f16-ctest.log"
build-gpu/tests/ew_sharded_tests --gtest_brief=1 > "$out/f16-sharded.log" 2>&1 || status=1
tail -3 "$out/f16-sharded.log"

for tool in memcheck racecheck; do
  step "compute-sanitizer --tool $tool"
  {
    sanitize $tool build-gpu/tests/float16/ew_float16_tests \
      'Backends/Float16.OpsRoundOnceFromFloatArithmetic/cuda:Backends/Float16.ConvertInPlaceBetween16BitTypes/cuda:Backends/Float16.RoundingEdgesFromDouble/cuda:Float16Cuda.ConvertMemorySpaces'
    sanitize $tool build-gpu/tests/ew_tests 'cuda/Ops.*f16_n17_*:cuda/Ops.*f16_n1048579_off2:cuda/Aliasing.*f16'
  } > "$out/f16-$tool.log" 2>&1
  sanitized "$out/f16-$tool.log"
done

if (( bench )); then
  step ew-cuda-bench
  build-gpu/bench/cuda/ew-cuda-bench --csv "$out/f16-bench.csv" > "$out/f16-bench.log" 2>&1 || status=1
  cat "$out/f16-bench.log"
  step "ew-roofline: cuda and its peers, f16, bf16, f32, 2^20..2^28, cold"
  build-gpu/bench/roofline/ew-roofline --backends cuda --dtypes f16,bf16,f32 --sizes 20:28:2 --cold \
    --no-expressions --no-reductions --json "$out/f16-roofline.json" --plot "$out/f16-roofline.svg" \
    > "$out/f16-roofline.log" 2>&1 || status=1
  cat "$out/f16-roofline.log"
  grep -E "warning|not available" "$out/f16-roofline.log" && status=1
fi
exit $status
