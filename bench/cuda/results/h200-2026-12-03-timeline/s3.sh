# One H200: the fixed order's finish in one warp (the staged bench kernel's last block: warp 0
# alone loads the 132 blocks' sums, adds them in registers and by shuffles, no barrier after the
# counter), after s1 and s2 put the block-wide ordered finish 0.5 us behind the atomicAdd one.
# The timeline (sum and dot, f32 and f64, 2^24..2^26) and --device-result twice, warm.
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
$b --timeline --sizes 24..26 --csv $OUT/timeline.csv > $OUT/timeline.txt 2>&1; echo "timeline rc=$? at $((SECONDS-start)) s"
grep -E "staged plan order +grid|ordered finish" $OUT/timeline.txt | cut -c1-80,150-300
for round in 1 2; do
  $b --device-result --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/device-$round.csv > $OUT/device-$round.log 2>&1; echo "device $round rc=$? at $((SECONDS-start)) s"
done
python3 bench/cuda/reduce_ratios.py $OUT/device-*.csv | grep -oE "^(sum|dot) f.. 2\^2.|repro cost [^ ]*|split: [^;]*|; finish in one warp [^;]*" | paste -d' ' - - - -
grep -hE "ordered finish in one warp|staged plan order +[0-9]" $OUT/device-1.log | grep "2^24" | cut -c1-140
cd /tmp && tar czf $R/s3.tgz s3
