# One H200: the library's staged kernel timed from inside (library-timeline.patch, applied here
# only), beside the bench kernels' timeline on the same machine: f32 sum at 2^24 and 2^25 (its
# default ring: one 8 KiB piece, one CUDA block an SM) and the f64 sum and dot at 2^24.
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
D=bench/cuda/results/h200-2026-12-03-timeline
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
$b --timeline --only sum,dot --sizes 24..25 --csv $OUT/timeline.csv > $OUT/timeline.txt 2>&1; echo "timeline rc=$? at $((SECONDS-start)) s"
$b --device-result --only sum,dot --sizes 24..25 --reps 15 --csv $OUT/device.csv > $OUT/device.log 2>&1; echo "device rc=$? at $((SECONDS-start)) s"
patch -p1 < $D/library-timeline.patch > /dev/null && cmake --build build-gpu -j 16 --target elementwise > $OUT/build-tl.log 2>&1; echo "patched build rc=$? at $((SECONDS-start)) s"
mkdir -p /tmp/lib-tl && cp -a build-gpu/core/libelementwise.so* /tmp/lib-tl/
for cell in sum,f32:24 sum,f32:25 sum,f64:24 dot,f64:24; do
  EW_TIMELINE_OUT=$OUT/lib-${cell/:/-}.bin LD_LIBRARY_PATH=/tmp/lib-tl:$LD_LIBRARY_PATH $b --device-result --only ${cell%:*} --sizes ${cell#*:}..${cell#*:} --reps 3 > $OUT/lib-${cell/:/-}.log 2>&1; echo "$cell rc=$?"
done
python3 $D/library_timeline.py $OUT/lib-*.bin | tee $OUT/library-timeline.txt
python3 bench/cuda/reduce_timeline.py $OUT/timeline.csv | grep -E "sum f32|sum f64 2\^24|dot f64 2\^24" | grep -E "atomic \(not|ordered finish( |,)|8 KiB x 1 |staged plan order +reads" | cut -c1-80,84-240
python3 bench/cuda/reduce_ratios.py $OUT/device.csv | grep -oE "^(sum|dot) f.. 2\^2.|repro cost [^ ]*|split: [^;]*" | paste -d' ' - - -
cd /tmp && tar czf $R/s4.tgz s4
