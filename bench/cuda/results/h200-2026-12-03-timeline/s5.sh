# One H200: the staged bench kernel with its plan blocks dealt warp by warp ("warp-major deal"),
# after s1-s4 put 7-9 % of the SMs' time idle before its last warp (the grid-stride kernel 4-5 %):
# at 2^24, 8192 plan blocks on 1056 warps numbered block by block leave the last partial round to
# the first 100 CUDA blocks (64 plan blocks on those SMs, 56 on the others); numbered warp by warp,
# every SM gets 62 or 63. Timeline 2^24..2^26, then --device-result twice warm and once cold.
set -u
R=$OUT; export OUT=/tmp/s5; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
$b --timeline --only sum,dot --sizes 24..26 --csv $OUT/timeline.csv > $OUT/timeline.txt 2>&1; echo "timeline rc=$? at $((SECONDS-start)) s"
for round in 1 2; do
  $b --device-result --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/device-$round.csv > $OUT/device-$round.log 2>&1; echo "device $round rc=$? at $((SECONDS-start)) s"
done
$b --device-result --cold --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/cold.csv > $OUT/cold.log 2>&1; echo "cold rc=$? at $((SECONDS-start)) s"
python3 bench/cuda/reduce_timeline.py $OUT/timeline.csv | grep -E "atomic \(not|staged plan order( |, 8 KiB x 1 |, 8 KiB x 1, warp|, warp)" | cut -c1-80,84-190
python3 bench/cuda/reduce_ratios.py $OUT/device-*.csv $OUT/cold.csv | grep -oE "^(sum|dot) f.. 2\^2.|repro cost [^ ]*|split: reading [^,]*|reading, (warp-major deal|8 KiB x 1|8 KiB x 1, warp-major deal) [^;]*" | paste -d' ' - - - - - -
cd /tmp && tar czf $R/s5.tgz s5
