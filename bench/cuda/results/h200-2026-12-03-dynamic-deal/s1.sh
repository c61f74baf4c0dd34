# One H200: the staged bench kernel with its plan blocks handed out by a counter as the warps
# ask ("dynamic": runs of 1 or 2 plan blocks, 8 KiB x 2 and 4 KiB x 4 rings) beside the same
# kernel dealing them in grid-stride order: ew-cuda-reduce-bench --device-result, sum and dot,
# warm twice and cold.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
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
grep -E "^==|^(sum|dot) f.. 2\^2[2-8]" $OUT/ratios.txt | sed -E 's/; (register kernel|staged,)[^;]*//g; s/ cub [^ ]* \(plain [^)]*\)//; s/ cublas [^ ]* \(plain [^)]*\)//; s/reading, //g' | head -60
# The dynamic rows' values beside the grid-stride kernel's (the same terms, another order).
grep -hE "atomic \(not|dynamic" $OUT/reduce-device-1.csv | awk -F, '$3==16777216 || $3==268435456' | cut -d, -f1-4,6- | head -24
cd /tmp && tar czf $R/s1.tgz s1
