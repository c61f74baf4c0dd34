# One H200: where a reduction call's time goes in the bench kernels, from the GPU's clock
# (ew-cuda-reduce-bench --timeline: stamps at fixed points of 40 calls back to back), sum and
# dot, f32 and f64, 2^24..2^28; then the same run's batch timing of the same kernels
# (--device-result, warm), whose per-call times the timeline's periods should match.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
build-gpu/bench/cuda/ew-cuda-reduce-bench --timeline --sizes 24..28 --csv $OUT/timeline.csv > $OUT/timeline.txt 2>&1; echo "timeline rc=$? at $((SECONDS-start)) s"
cat $OUT/timeline.txt
build-gpu/bench/cuda/ew-cuda-reduce-bench --device-result --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/reduce-device.csv > $OUT/reduce-device.log 2>&1; echo "device rc=$? at $((SECONDS-start)) s"
grep -E "ew cuda \(default\)|atomic \(not|atomic, staged plan order +[0-9]|staged plan order, 4 KiB x 4 |ordered finish" $OUT/reduce-device.log | cut -c1-110
cd /tmp && tar czf $R/s1.tgz s1
