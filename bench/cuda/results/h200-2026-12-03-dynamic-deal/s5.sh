# One H200: the benchmark after its staged bench kernels' enqueue and piece walk were written
# once for both (no change of what they compute), with the f32 sum's one-piece default:
# ew-cuda-reduce-bench --device-result, sum and dot, 2^24..2^28, warm once.
set -u
R=$OUT; export OUT=/tmp/s5; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
build-gpu/bench/cuda/ew-cuda-reduce-bench --device-result --only sum,dot --sizes 24..28 --reps 15 --csv $OUT/reduce-device-1.csv > $OUT/reduce-device-1.log 2>&1; echo "warm rc=$? at $((SECONDS-start)) s"
python3 bench/cuda/reduce_ratios.py $OUT/reduce-device-1.csv > $OUT/ratios.txt
grep -E "^(sum|dot) f.. 2\^2[4-8]" $OUT/ratios.txt | sed -E 's/; ordered finish[^;]*//; s/; reading, [^;]*//g; s/; (register kernel|staged, 3 slots|staged, units of 8|staged, units of 32|staged, 1 slot)[^;]*//g'
# Values of the staged bench rows beside the grid-stride kernel's (f32: the same double terms).
grep -hE "atomic \(not|staged plan order" $OUT/reduce-device-1.csv | awk -F, '$2=="f32" && $3==16777216' | cut -d, -f1-3,6- | head -12
cd /tmp && tar czf $R/s5.tgz s5
