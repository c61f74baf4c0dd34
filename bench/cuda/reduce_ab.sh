#!/usr/bin/env bash
# A change to the reduction kernels measured against the code before it, in one run on a GPU
# machine without network access: the working tree is "new"; "old" is a copy of it with the
# files of OLD_DIR put back (OLD_DIR mirrors the repository's paths, e.g.
# OLD_DIR/backends/cuda/reduce.cu). Builds both, runs the reduction tests of the new one on
# the GPU (with memcheck, racecheck and synccheck), then ew-cuda-reduce-bench of old and new
# in turn, ROUNDS times: --device-result at 2^20..2^28 (warm) and --cold at 2^24..2^28, and
# the value on the host at 2^20..2^24. Each benchmark run has cub, cuBLAS and the atomic
# variant beside the library in the same run; reduce_ratios.py gives those ratios per run
# (ratios.txt), reduce_ab_compare.py old against new (old-new.txt: runs of one machine,
# seconds apart, interleaved). Logs and CSV files go to $OUT (default ./out).
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/reduce_ab.sh OLD_DIR [ROUNDS]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
[[ $# -ge 1 && -d $1 ]] || { echo "usage: reduce_ab.sh OLD_DIR [ROUNDS] (OLD_DIR: a folder of old files)"; exit 2; }
old_dir=$(realpath -e "$1") || exit 2
[[ -n $(find "$old_dir" -type f -print -quit) ]] || { echo "$old_dir holds no file"; exit 2; }
rounds=${2:-2}
rm -f "$out"/{old,new}-*  # the comparisons glob every round's files

step configure
flags=(-DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=ON -DEW_BUILD_TESTS=ON)
bash tools/gpu/prepare.sh build-gpu "${flags[@]}" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# The old tree: the sources without build folders, caches and the output, then OLD_DIR over them.
old_tree=$(mktemp -d)
tar -c -f - --exclude='./build*' --exclude=./.git --exclude=./.kokkos --exclude='./.snap*' --exclude=./.deps \
  --exclude=./.babelstream --exclude=./out . | tar -x -f - -C "$old_tree" || exit 1
cp -a "$old_dir/." "$old_tree/" || exit 1
(cd "$old_tree" && bash tools/gpu/prepare.sh build-gpu "${flags[@]}" > "$out/old-configure.log" 2>&1) ||
  { tail -30 "$out/old-configure.log"; exit 1; }

step "build new and old"
cmake --build build-gpu -j 16 --target ew_reduce_tests ew-cuda-reduce-bench > "$out/new-build.log" 2>&1 ||
  { tail -60 "$out/new-build.log"; exit 1; }
cmake --build "$old_tree/build-gpu" -j 16 --target ew-cuda-reduce-bench > "$out/old-build.log" 2>&1 ||
  { tail -60 "$out/old-build.log"; exit 1; }

step "reduction tests (new): every backend, cuda bit for bit against scalar"
build-gpu/tests/reduce/ew_reduce_tests > "$out/reduce-tests.log" 2>&1 || status=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/reduce-tests.log" | grep -E "cuda|PASSED|FAILED"
grep -q "SKIPPED ] cuda/" "$out/reduce-tests.log" && { echo "cuda cases skipped: no usable GPU?"; status=1; }
for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer --tool $tool (new)"
  sanitize "$tool" build-gpu/tests/reduce/ew_reduce_tests 'cuda/Reduce.SameBitsAsScalarWithSpecialValues/*:cuda/Reduce.SpecialValueRules/*:cuda/Reduce.EmptyGivesTheIdentity/*:cuda/Reduce16.SameBitsWithSpecialValues/*:cuda/Reduce16.StoresAFloatIntoAResultSpan/*:cuda/ExprReduce.SpecialValuesAndEmpty/*:cuda/ExprReduceGpu.PinnedAndManagedInputs/*:cuda/ReduceGrid.ExtremaThroughWholeBatches/*' \
    > "$out/reduce-$tool.log" 2>&1
  sanitized "$out/reduce-$tool.log"
done

# Old first in odd rounds, new first in even ones.
for r in $(seq 1 "$rounds"); do
  order=(old new)
  (( r % 2 == 0 )) && order=(new old)
  for which in "${order[@]}"; do
    b=build-gpu/bench/cuda/ew-cuda-reduce-bench
    [[ $which == old ]] && b=$old_tree/$b
    step "round $r, $which: --device-result 2^20..2^28, --cold 2^24..2^28, value on the host 2^20..2^24"
    $b --device-result --sizes 20..28 --reps 15 --csv "$out/$which-$r-device.csv" > "$out/$which-$r-device.log" 2>&1 || status=1
    $b --device-result --cold --sizes 24..28 --reps 15 --csv "$out/$which-$r-cold.csv" > "$out/$which-$r-cold.log" 2>&1 || status=1
    $b --sizes 20..24 --csv "$out/$which-$r-host.csv" > "$out/$which-$r-host.log" 2>&1 || status=1
    grep -E "NOT|differ|FAIL" "$out/$which-$r-"*.log
  done
done
step "same-run ratios (cub, cuBLAS, reproducibility cost) of every run"
python3 bench/cuda/reduce_ratios.py "$out"/{old,new}-*-device.csv "$out"/{old,new}-*-cold.csv > "$out/ratios.txt"
step "old against new (the library's time, mean of the rounds)"
python3 bench/cuda/reduce_ab_compare.py "$out" | tee "$out/old-new.txt"
exit $status
