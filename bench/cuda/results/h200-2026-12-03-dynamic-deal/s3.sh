# One H200: the staged kernel's ring of one 8 KiB piece a warp, as two CUDA blocks an SM and as
# one (80 KiB of shared memory, which leaves room on the SM for the next call's block while this
# one drains: does the launch overlap pay for the bytes in flight given up?), and both bench
# kernels (grid-stride and staged) with plain launches: the reading part without the overlap.
# The cuda reduction tests (now with 1-slot rings), then ew-cuda-reduce-bench --device-result,
# sum and dot, warm twice and cold.
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench ew_reduce_tests > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*' > $OUT/tests.log 2>&1; echo "tests rc=$? at $((SECONDS-start)) s"
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]" $OUT/tests.log | head
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  $b --device-result --only sum,dot --sizes 22..28 --reps 15 --csv $OUT/reduce-device-$round.csv > $OUT/reduce-device-$round.log 2>&1; echo "warm $round rc=$? at $((SECONDS-start)) s"
done
$b --device-result --cold --only sum,dot --sizes 24..28 --reps 15 --csv $OUT/reduce-cold-1.csv > $OUT/reduce-cold-1.log 2>&1; echo "cold rc=$? at $((SECONDS-start)) s"
python3 bench/cuda/reduce_ratios.py $OUT/reduce-device-*.csv $OUT/reduce-cold-*.csv > $OUT/ratios.txt
grep -E "^==|^(sum|dot) f.. 2\^2[2-8]" $OUT/ratios.txt | sed -E 's/ cub [^ ]* \(plain [^)]*\)//; s/ cublas [^ ]* \(plain [^)]*\)//; s/; ordered finish[^;]*//; s/; reading, [^;]*//g; s/; (register kernel|staged, 3 slots|staged, units of 8|staged, units of 32)[^;]*//g'
cd /tmp && tar czf $R/s3.tgz s3
