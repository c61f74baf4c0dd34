# One H200 (a fifth machine): s4's defaults with the sums' staged range extended where the
# memory gives an SM 30 GB/s or more (s4's machine read the staged kernel faster there): the f64
# sum to 2^27, the f32 sum to the end. The cuda reduction tests, then ew-cuda-reduce-bench with
# the value on the device, sum 2^24..2^28, warm twice and cold once, each default row beside the
# forced register kernel in the same run.
set -u
R=$OUT; export OUT=/tmp/s5; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_TESTS=ON > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench ew_reduce_tests > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
t=build-gpu/tests/reduce/ew_reduce_tests
timeout -k 5 200 $t --gtest_filter='cuda/*:ReduceDefaults*' > $OUT/tests.log 2>&1; echo "tests rc=$? at $((SECONDS-start)) s"; grep -E "PASSED|FAILED" $OUT/tests.log | head -5
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  timeout -k 5 150 $b --device-result --only sum --sizes 24..28 --reps 15 --csv $OUT/device-$round.csv > $OUT/device-$round.log 2>&1; echo "warm $round rc=$? at $((SECONDS-start)) s"
done
timeout -k 5 150 $b --device-result --cold --only sum --sizes 24..28 --reps 15 --csv $OUT/cold.csv > $OUT/cold.log 2>&1; echo "cold rc=$? at $((SECONDS-start)) s"
for f in $OUT/device-1.csv $OUT/device-2.csv $OUT/cold.csv; do
  python3 bench/cuda/reduce_ratios.py $f | sed -E 's/; ordered finish.*; register kernel/; register kernel/; s/\(plain [^)]*\) //g; s/; best [^;]*//; s/; staged, 3 slots[^;]*; staged, 1 slot [^;]*//' > $f.ratios
done
grep -h "^sum\|^dot" $OUT/*.ratios | sort -s -k1,3 | cut -c1-200
cd /tmp && tar czf $R/s5.tgz s5
