#!/usr/bin/env bash
# Reductions on cuda, checked on a GPU machine without network access, in one go:
# configure for the GPU at hand, build, the reduction tests that need a GPU (tests/reduce's
# cuda/* cases: bit for bit against the scalar backend at sizes around the block edges,
# offsets 0..3, special values, the exact-reference bound, bad input), compute-sanitizer
# memcheck, racecheck and synccheck on them, then ew-cuda-reduce-bench (sum, dot, norm2
# against cub::DeviceReduce and cuBLAS at 2^20..2^28, f32 and f64). Logs go to $OUT
# (default ./out).
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/reduce_check.sh [--no-bench] [extra CMake arguments]
set -uo pipefail
out=${OUT:-$PWD/out}
mkdir -p "$out"
bench=1
if [[ ${1:-} == --no-bench ]]; then bench=0; shift; fi
status=0
step() { echo; echo "=== $* ($(date +%T))"; }

step configure
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF "$@" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

step build
targets=(ew-info ew_reduce_tests)
(( bench )) && targets+=(ew-cuda-reduce-bench)
cmake --build build-gpu -j 16 --target "${targets[@]}" > "$out/reduce-build.log" 2>&1 || { tail -60 "$out/reduce-build.log"; exit 1; }
build-gpu/tools/ew-info | tee "$out/reduce-ew-info.log"

step "reduction tests: every backend, cuda bit for bit against scalar"
build-gpu/tests/reduce/ew_reduce_tests > "$out/reduce-tests.log" 2>&1 || status=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/reduce-tests.log"
grep -q "SKIPPED ] cuda/" "$out/reduce-tests.log" && { echo "cuda cases skipped: no usable GPU?"; status=1; }

for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer --tool $tool"
  timeout -k 10 900 compute-sanitizer --tool $tool --error-exitcode 7 build-gpu/tests/reduce/ew_reduce_tests \
    --gtest_filter='cuda/Reduce.SameBitsAsScalarWithSpecialValues/*:cuda/Reduce.SpecialValueRules/*:cuda/Reduce.EmptyGivesTheIdentity/*' \
    --gtest_brief=1 > "$out/reduce-$tool.log" 2>&1 || { echo "FAILED under $tool (rc $?)"; status=1; }
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/reduce-$tool.log" | head -5
done

if (( bench )); then
  step "ew-cuda-reduce-bench 2^20..2^28"
  build-gpu/bench/cuda/ew-cuda-reduce-bench --sizes 20..28 --csv "$out/reduce-bench.csv" > "$out/reduce-bench.log" 2>&1 || status=1
  cat "$out/reduce-bench.log"
fi
exit $status
