#!/usr/bin/env bash
# Reductions on cuda, checked on a GPU machine without network access, in one go:
# configure for the GPU at hand, build, the reduction tests that need a GPU (tests/reduce's
# cuda/* cases: bit for bit against the scalar backend at sizes around the block edges,
# offsets 0..3, special values, the exact-reference bound, bad input; f16 and bf16 against
# scalar and against their widened data reduced as f32; the reductions over an expression,
# cuda/ExprReduce*: the bits of evaluating then ew::sum and of scalar's, the chunk forced to
# 1..256 plan blocks and the default one, 16-bit outputs, pinned and managed inputs), compute-sanitizer
# memcheck, racecheck and synccheck on them, the kernels' register counts, then
# ew-cuda-reduce-bench (sum, dot, norm2 against cub::DeviceReduce and cuBLAS at 2^20..2^28,
# f32 and f64): the value brought to the host after every call, then the device-resident
# form (batches of calls timed with events, the same form for every method) with the
# non-reproducible "atomic" variant beside it (what reproducibility costs), then --sweep
# (every tuning of the kernel at 2^20, 2^24, 2^28, bits checked against the default), and
# BabelStream's driver with Dot through ew::dot (ew-babelstream: cuda in double and float,
# highway in double), and ew-roofline's reductions over an expression (sum((a-b)^2),
# asum(a*b) against the unfused form and cub TransformReduce). Highway is built explicitly
# (-DEW_ENABLE_HIGHWAY=ON), so the tests' highway cases run too. Logs and CSV files go to $OUT
# (default ./out). About 6 minutes on an H100 (352 s on 2026-11-23; --quick 4, --expr-only 3).
# --quick stops after the sweep (no ew-roofline, no BabelStream): the kernel's own steps.
# --expr-only runs the reductions over an expression alone: their tests (every backend built,
# cuda's fused kernel and its chunked path for pinned inputs), memcheck and racecheck on
# them, and ew-roofline's reductions over an expression.
# --extrema-only: the reduction tests, memcheck and racecheck on those of min_element and
# max_element, the 2^31 + 5 test (8 GiB on the GPU) and ew-cuda-reduce-bench --extrema
# (against cub's ArgMin / ArgMax).
# --kernels: the sums' two kernels (the register kernel and the staged one): the cuda
# reduction tests, the sanitizers on them and on the staged kernel's tests, the kernels'
# registers, then ew-cuda-reduce-bench --device-result at 2^20..2^28, warm and --cold, twice
# each (each run has both kernels forced beside the default, cub, cuBLAS and the atomic
# variants) and reduce_ratios.py over them (ratios.txt). About 4-5 minutes (207-307 s on an H100
# and an H200, 2026-11-26).
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/reduce_check.sh [--no-bench | --quick | --expr-only | --extrema-only | --kernels] [extra CMake arguments]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
quick=0 expr_only=0 extrema_only=0 kernels=0
case ${1:-} in
  --kernels) kernels=1; shift ;;
  --no-bench) bench=0; shift ;;
  --quick) quick=1; shift ;;
  --expr-only) expr_only=1; shift ;;
  --extrema-only) extrema_only=1; shift ;;
esac

step configure
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=ON -DEW_BUILD_TESTS=ON "$@" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

# One compute-sanitizer run of the reduction tests on a filter (check_common.sh's sanitize),
# logged to $out/reduce-<NAME><TOOL>.log (NAME empty or "expr-"), its summary printed.
sanitize_reductions() {
  local tool=$1 log="$out/reduce-$2$1.log"
  sanitize "$tool" build-gpu/tests/reduce/ew_reduce_tests "$3" > "$log" 2>&1
  sanitized "$log"
}

if (( expr_only )); then
  step "build (reductions over an expression)"
  cmake --build build-gpu -j 16 --target ew_reduce_tests ew-roofline > "$out/reduce-build.log" 2>&1 ||
    { tail -60 "$out/reduce-build.log"; exit 1; }
  step "reductions over an expression: tests"
  build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='*ExprReduce*' > "$out/reduce-expr-tests.log" 2>&1 || status=1
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]" "$out/reduce-expr-tests.log" | grep -E "cuda|PASSED|FAILED"
  grep -q "SKIPPED ] cuda/" "$out/reduce-expr-tests.log" && { echo "cuda cases skipped: no usable GPU?"; status=1; }
  for tool in memcheck racecheck; do
    step "compute-sanitizer --tool $tool (reductions over an expression)"
    sanitize_reductions $tool expr- 'cuda/ExprReduce.SpecialValuesAndEmpty/*:cuda/ExprReduce.SumOfSquaredDifferencesIsTheSumOfTheEvaluatedArray/*:cuda/ExprReduceGpu.PinnedAndManagedInputs/*'
  done
  step "ew-roofline reductions over an expression in f32 and f64 (fused, unfused, cub TransformReduce)"
  build-gpu/bench/roofline/ew-roofline --backends cuda --dtypes f32,f64 --ops copy --sizes 20,24,26,28 --warm \
    --no-expressions --json "$out/reduce-roofline-expr.json" > "$out/reduce-roofline-expr.log" 2>&1 || status=1
  grep -E "^device|sum\(\(a-b\)\^2\)|asum\(a\*b\)|NOT VERIFIED" "$out/reduce-roofline-expr.log"
  exit $status
fi

if (( kernels )); then
  step "build (the sums' kernels)"
  cmake --build build-gpu -j 16 --target ew_reduce_tests ew-cuda-reduce-bench > "$out/reduce-build.log" 2>&1 ||
    { tail -60 "$out/reduce-build.log"; exit 1; }
  step "cuda reduction tests, bit for bit against scalar"
  build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*' > "$out/reduce-tests.log" 2>&1 || status=1
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]|Staged" "$out/reduce-tests.log"
  grep -q "SKIPPED ] cuda/" "$out/reduce-tests.log" && { echo "cuda cases skipped: no usable GPU?"; status=1; }
  for tool in memcheck racecheck synccheck; do
    step "compute-sanitizer --tool $tool (both kernels)"
    sanitize_reductions $tool kernels- 'cuda/Reduce.SameBitsAsScalarWithSpecialValues/*:cuda/Reduce.EmptyGivesTheIdentity/*:cuda/ReduceGrid.StagedKernelGivesTheSameBits/*'
  done
  if command -v cuobjdump > /dev/null; then
    cuobjdump --dump-resource-usage build-gpu/core/libelementwise.so 2>&1 | grep -A1 -E "sum_kernel|staged_kernel" |
      grep -oE "Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+" | paste -d' ' - - - - | c++filt > "$out/reduce-registers.log"
    grep staged_kernel "$out/reduce-registers.log"
  fi
  b=build-gpu/bench/cuda/ew-cuda-reduce-bench
  for round in 1 2; do
    step "ew-cuda-reduce-bench --device-result 2^20..2^28, warm and cold, round $round"
    $b --device-result --sizes 20..28 --reps 15 --csv "$out/reduce-device-$round.csv" > "$out/reduce-device-$round.log" 2>&1 ||
      { echo "FAILED (rc $?)"; status=1; }
    $b --device-result --cold --sizes 24..28 --reps 15 --csv "$out/reduce-cold-$round.csv" > "$out/reduce-cold-$round.log" 2>&1 ||
      { echo "FAILED (rc $?)"; status=1; }
  done
  python3 bench/cuda/reduce_ratios.py "$out"/reduce-device-*.csv "$out"/reduce-cold-*.csv | tee "$out/ratios.txt"
  exit $status
fi

if (( extrema_only )); then
  step "build (min_element, max_element)"
  cmake --build build-gpu -j 16 --target ew_reduce_tests ew_reduce_huge_tests ew-cuda-reduce-bench \
    > "$out/reduce-build.log" 2>&1 || { tail -60 "$out/reduce-build.log"; exit 1; }
  step "reduction tests: every backend, cuda bit for bit against scalar"
  build-gpu/tests/reduce/ew_reduce_tests > "$out/reduce-tests.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/reduce-tests.log"
  grep -q "SKIPPED ] cuda/" "$out/reduce-tests.log" && { echo "cuda cases skipped: no usable GPU?"; status=1; }
  for tool in memcheck racecheck; do
    step "compute-sanitizer --tool $tool (min_element, max_element among them)"
    sanitize_reductions $tool extrema- 'cuda/Reduce.SameBitsAsScalarWithSpecialValues/*:cuda/Reduce.SpecialValueRules/*:cuda/Reduce16.SameBitsWithSpecialValues/*:cuda/ReduceGrid.ExtremaThroughWholeBatches/*'
  done
  step "2^31 + 5 floats: sum, min, max on cuda against scalar (EW_RUN_HUGE=1)"
  EW_RUN_HUGE=1 build-gpu/tests/reduce/ew_reduce_huge_tests > "$out/reduce-huge.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$out/reduce-huge.log"
  step "ew-cuda-reduce-bench --extrema 2^20..2^28 (against cub ArgMin / ArgMax)"
  build-gpu/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 --csv "$out/reduce-extrema.csv" \
    > "$out/reduce-extrema.log" 2>&1 || status=1
  cat "$out/reduce-extrema.log"
  exit $status
fi

step build
targets=(ew-info ew_reduce_tests)
(( bench )) && targets+=(ew-cuda-reduce-bench)
(( bench && !quick )) && targets+=(ew-babelstream ew-roofline)
cmake --build build-gpu -j 16 --target "${targets[@]}" > "$out/reduce-build.log" 2>&1 || { tail -60 "$out/reduce-build.log"; exit 1; }
build-gpu/tools/ew-info | tee "$out/reduce-ew-info.log"

step "reduction tests: every backend, cuda bit for bit against scalar"
build-gpu/tests/reduce/ew_reduce_tests > "$out/reduce-tests.log" 2>&1 || status=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/reduce-tests.log"
grep -q "SKIPPED ] cuda/" "$out/reduce-tests.log" && { echo "cuda cases skipped: no usable GPU?"; status=1; }
grep -q "SKIPPED ] highway/" "$out/reduce-tests.log" && { echo "highway cases skipped: built without highway?"; status=1; }
echo "reductions over an expression on cuda:"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\] cuda/ExprReduce" "$out/reduce-tests.log"

step "registers and stack of the reduction kernels"
if command -v cuobjdump > /dev/null; then
  cuobjdump --dump-resource-usage build-gpu/core/libelementwise.so 2>&1 | grep -A1 -E "sum_kernel|extremum_kernel" |
    grep -oE "Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+" | paste -d' ' - - - - | c++filt > "$out/reduce-registers.log"
  head -80 "$out/reduce-registers.log"
  cuobjdump -sass build-gpu/core/libelementwise.so 2>/dev/null | python3 bench/cuda/reduce_sass.py | tee "$out/reduce-loads-in-flight.log"
else
  echo "no cuobjdump"
fi

for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer --tool $tool"
  sanitize_reductions $tool "" 'cuda/Reduce.SameBitsAsScalarWithSpecialValues/*:cuda/Reduce.SpecialValueRules/*:cuda/Reduce.EmptyGivesTheIdentity/*:cuda/Reduce16.SameBitsWithSpecialValues/*:cuda/Reduce16.StoresAFloatIntoAResultSpan/*:cuda/ExprReduce.SpecialValuesAndEmpty/*:cuda/ExprReduceGpu.PinnedAndManagedInputs/*:cuda/ReduceGrid.ExtremaThroughWholeBatches/*'
done

if (( bench )); then
  b=build-gpu/bench/cuda/ew-cuda-reduce-bench
  step "ew-cuda-reduce-bench 2^20..2^28, value on the host after every call"
  $b --sizes 20..28 --csv "$out/reduce-bench.csv" > "$out/reduce-bench.log" 2>&1 || status=1
  cat "$out/reduce-bench.log"
  step "ew-cuda-reduce-bench --extrema 2^20..2^28 (min_element, max_element against cub ArgMin / ArgMax)"
  $b --extrema --sizes 20..28 --csv "$out/reduce-extrema.csv" > "$out/reduce-extrema.log" 2>&1 || status=1
  cat "$out/reduce-extrema.log"
  step "ew-cuda-reduce-bench --device-result 2^20..2^28 (with the non-reproducible atomic variant)"
  $b --device-result --sizes 20..28 --reps 15 --csv "$out/reduce-bench-device.csv" > "$out/reduce-bench-device.log" 2>&1 || status=1
  cat "$out/reduce-bench-device.log"
  step "ew-cuda-reduce-bench --sweep (tunings at 2^20, 2^24, 2^28; bits against the default)"
  $b --sweep --reps 15 --csv "$out/reduce-sweep.csv" > "$out/reduce-sweep.log" 2>&1 || { echo "sweep FAILED (rc $?)"; status=1; }
  cat "$out/reduce-sweep.log"
  (( quick )) && exit $status
  step "ew-roofline reductions in f16, bf16 and f32 (cuda and cub on __half/__nv_bfloat16, 2 bytes per element read)"
  build-gpu/bench/roofline/ew-roofline --backends cuda --dtypes f16,bf16,f32 --ops copy --sizes 20,24,28 --warm \
    --no-expressions --json "$out/reduce-roofline16.json" > "$out/reduce-roofline16.log" 2>&1 || status=1
  sed -n '/^reductions/,$p' "$out/reduce-roofline16.log"
  step "ew-roofline reductions over an expression in f32 and f64 (fused, unfused, cub TransformReduce)"
  build-gpu/bench/roofline/ew-roofline --backends cuda --dtypes f32,f64 --ops copy --sizes 20,22,24,26,28 --warm \
    --no-expressions --json "$out/reduce-roofline-expr.json" > "$out/reduce-roofline-expr.log" 2>&1 || status=1
  grep -E "^device|sum\(\(a-b\)\^2\)|asum\(a\*b\)|NOT VERIFIED" "$out/reduce-roofline-expr.log"
  step "ew-babelstream: BabelStream's driver, Dot through ew::dot"
  s=build-gpu/bench/babelstream/ew-babelstream
  log="$out/reduce-babelstream.log"
  $s --backend cuda > "$log" 2>&1 || { echo "BabelStream on cuda (double) FAILED" | tee -a "$log"; status=1; }
  $s --backend highway --numtimes 20 >> "$log" 2>&1 || { echo "BabelStream on highway (double) FAILED" | tee -a "$log"; status=1; }
  # In float, BabelStream's own sum check is expected to fail (docs/reductions.md says why).
  $s --backend cuda --float >> "$log" 2>&1
  cat "$log"
fi
exit $status
