# One H200 (a third machine): the change as it lands, the split widening and the f32 dot on the
# staged kernel at 2^23..2^25 where the memory gives an SM 30 GB/s or more. The cuda reduction
# tests, then ew-cuda-reduce-bench with the value on the device, sum and dot 2^22..2^26, warm
# twice and cold once (the f32 dot's default row beside its forced register-kernel row), then
# synccheck and racecheck on the staged kernel's test.
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_TESTS=ON > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench ew_reduce_tests > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
t=build-gpu/tests/reduce/ew_reduce_tests
timeout -k 5 200 $t --gtest_filter='cuda/*:ReduceDefaults*' > $OUT/tests.log 2>&1; echo "tests rc=$? at $((SECONDS-start)) s"; grep -E "PASSED|FAILED" $OUT/tests.log | head -5
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  timeout -k 5 90 $b --device-result --only sum,dot --sizes 22..26 --reps 15 --csv $OUT/device-$round.csv > $OUT/device-$round.log 2>&1; echo "warm $round rc=$? at $((SECONDS-start)) s"
done
timeout -k 5 90 $b --device-result --cold --only sum,dot --sizes 22..26 --reps 15 --csv $OUT/cold.csv > $OUT/cold.log 2>&1; echo "cold rc=$? at $((SECONDS-start)) s"
for f in $OUT/device-1.csv $OUT/device-2.csv $OUT/cold.csv; do
  python3 bench/cuda/reduce_ratios.py $f | sed -E 's/; ordered finish.*; register kernel/; register kernel/; s/; staged, 3 slots.*//' > $f.ratios
done
grep -h "dot f32" $OUT/*.ratios
for tool in synccheck racecheck; do
  timeout -k 5 200 compute-sanitizer --tool $tool --error-exitcode 7 $t --gtest_filter='cuda/ReduceGrid.StagedKernelGivesTheSameBits/*' > $OUT/$tool.log 2>&1; echo "$tool rc=$? at $((SECONDS-start)) s"; tail -1 $OUT/$tool.log
done
cd /tmp && tar czf $R/s3.tgz s3
