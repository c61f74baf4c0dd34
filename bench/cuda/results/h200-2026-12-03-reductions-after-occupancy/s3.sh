# One H200: the ordered finish with every slot's load in flight at once (s2's loaded them one
# round trip at a time), and the staged bench kernel with finer rings (4 KiB x 4, 2 KiB x 8: the
# same bytes in flight; 4 KiB x 2: half): ew-cuda-reduce-bench --device-result, sum and dot,
# warm twice and cold.
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  $b --device-result --only sum,dot --sizes 20..28 --reps 15 --csv $OUT/reduce-device-$round.csv > $OUT/reduce-device-$round.log 2>&1; echo "warm $round rc=$? at $((SECONDS-start)) s"
done
$b --device-result --cold --only sum,dot --sizes 24..28 --reps 15 --csv $OUT/reduce-cold-1.csv > $OUT/reduce-cold-1.log 2>&1; echo "cold rc=$? at $((SECONDS-start)) s"
python3 bench/cuda/reduce_ratios.py $OUT/reduce-device-*.csv $OUT/reduce-cold-*.csv > $OUT/ratios.txt
grep -E "^(sum|dot) f.. 2\^2[2-8]" $OUT/ratios.txt | sed -E 's/; (register kernel|staged,)[^;]*//g; s/ cub [^ ]* \(plain [^)]*\)//; s/ cublas [^ ]* \(plain [^)]*\)//' | head -60
cd /tmp && tar czf $R/s3.tgz s3
