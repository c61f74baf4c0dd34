# One H200: the library's staged kernel for the f32 sums in three forms, built in turn into one
# build folder and each library kept apart (the benchmark binary is the same): "orig" (the tree:
# 8 KiB x 2, each lane's column copied into registers before the refill), "split" (the reverted
# half pieces, 4 KiB x 4 with the same copy: ../h200-2026-12-03-reductions-after-occupancy/
# split-pieces.patch) and "hold" (4 KiB x 4 with the adds straight from the slot and the refill
# after them, as the bench kernel reads: hold-pieces.patch). The reduction tests of "hold" on
# the GPU; ew-cuda-reduce-bench --device-result --only sum,f32, the three interleaved, warm
# twice and cold; ncu of each library's staged kernel and of the bench kernel's 4 KiB x 4 ring
# at 2^24.
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
D=bench/cuda/results/h200-2026-12-03-dynamic-deal
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
cp backends/cuda/reduce.cu /tmp/reduce.orig.cu
for v in orig split hold; do
  cp /tmp/reduce.orig.cu backends/cuda/reduce.cu
  [[ $v == split ]] && patch -p1 -s < bench/cuda/results/h200-2026-12-03-reductions-after-occupancy/split-pieces.patch
  [[ $v == hold ]] && patch -p1 -s < $D/hold-pieces.patch
  targets=ew-cuda-reduce-bench; [[ $v == hold ]] && targets="ew-cuda-reduce-bench ew_reduce_tests"
  cmake --build build-gpu -j 16 --target $targets > $OUT/build-$v.log 2>&1; echo "build $v rc=$? at $((SECONDS-start)) s"
  mkdir -p /tmp/lib-$v && cp -a build-gpu/core/libelementwise.so* /tmp/lib-$v/
done
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*' > $OUT/hold-tests.log 2>&1; echo "hold tests rc=$? at $((SECONDS-start)) s"
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]" $OUT/hold-tests.log | head
for round in 1 2; do
  for v in orig split hold; do
    LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH $b --device-result --only sum,f32 --sizes 22..28 --reps 15 --csv $OUT/$v-device-$round.csv > $OUT/$v-device-$round.log 2>&1 || echo "$v $round failed"
  done
  echo "warm round $round at $((SECONDS-start)) s"
done
for v in orig split hold; do
  LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH $b --device-result --cold --only sum,f32 --sizes 24..26 --reps 15 --csv $OUT/$v-cold-1.csv > $OUT/$v-cold-1.log 2>&1 || echo "$v cold failed"
done
echo "cold at $((SECONDS-start)) s"
for f in $OUT/*-device-*.csv $OUT/*-cold-*.csv; do python3 bench/cuda/reduce_ratios.py $f; done > $OUT/ratios.txt
grep -E "^==|^sum f32 2\^2[2-8]" $OUT/ratios.txt | sed -E 's/ cub [^ ]* \(plain [^)]*\)//; s/reading, //g; s/; (register kernel|staged, 3 slots|staged, units of 32)[^;]*//g; s/; (2 KiB x 8|dynamic)[^;]*//g'
prof() {  # NAME LIB KERNEL_REGEX SKIP
  LD_LIBRARY_PATH=/tmp/lib-$2:$LD_LIBRARY_PATH timeout 120 ncu --clock-control none -k "regex:$3" --launch-skip $4 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,smsp__inst_executed.sum \
    $b --device-result --only sum,f32 --sizes 24..24 --reps 1 > $OUT/ncu-$1.txt 2>&1
  echo "-- $1"; grep -E "gpu__time_duration|DRAM Throughput|smsp__inst_executed.sum|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|No Eligible" $OUT/ncu-$1.txt | head -8
}
prof lib-orig orig staged_kernel 3
prof lib-split split staged_kernel 3
prof lib-hold hold staged_kernel 3
prof bench-8x2 orig atomic_staged 3
prof bench-4x4 orig atomic_staged 26
echo "done at $((SECONDS-start)) s"
cp /tmp/reduce.orig.cu backends/cuda/reduce.cu
cd /tmp && tar czf $R/s2.tgz s2
