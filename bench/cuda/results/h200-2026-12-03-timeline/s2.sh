# One H200: the staged kernel's last piece a warp in parts (stage_last_parts), after s1's timeline
# put 0.8 us of the f32 sum's 2^24 call in the adds of the warps' last pieces after they land.
# Tests (the cuda reductions, the staged rings with their last pieces in 1..8 parts) and the
# sanitizers on the staged kernel; the same benchmark binary with the library as built here
# ("new") and without the change ("old": last-parts.patch reversed), interleaved, sum and dot
# 2^24..2^26 warm twice and cold once; the bench kernels' timeline with the last piece in 8.
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
D=bench/cuda/results/h200-2026-12-03-timeline
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_TESTS=ON > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew_reduce_tests ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]" $OUT/tests.log
for tool in memcheck racecheck synccheck; do
  timeout -k 10 300 compute-sanitizer --tool $tool --error-exitcode 7 build-gpu/tests/reduce/ew_reduce_tests \
    --gtest_filter='cuda/ReduceGrid.StagedKernelGivesTheSameBits/*' --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$? at $((SECONDS-start)) s"
  grep -E "SUMMARY|PASSED|FAILED" $OUT/$tool.log | head -3
done
cuobjdump --dump-resource-usage build-gpu/core/libelementwise.so 2>&1 | grep -A1 -E "staged_kernel" |
  grep -oE "Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+" | paste -d' ' - - - - | c++filt | sed -E 's/\(float const.*\) REG/ REG/; s/\(double const.*\) REG/ REG/' > $OUT/registers-new.txt
mkdir -p /tmp/lib-new /tmp/lib-old && cp -a build-gpu/core/libelementwise.so* /tmp/lib-new/
patch -R -p1 < $D/last-parts.patch > /dev/null && cmake --build build-gpu -j 16 --target elementwise > $OUT/build-old.log 2>&1; echo "old build rc=$? at $((SECONDS-start)) s"
cp -a build-gpu/core/libelementwise.so* /tmp/lib-old/
cuobjdump --dump-resource-usage build-gpu/core/libelementwise.so 2>&1 | grep -A1 -E "staged_kernel" |
  grep -oE "Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+" | paste -d' ' - - - - | c++filt | sed -E 's/\(float const.*\) REG/ REG/; s/\(double const.*\) REG/ REG/' > $OUT/registers-old.txt
paste $OUT/registers-old.txt $OUT/registers-new.txt | sed -E 's/Function void ew::detail::cuda::\(anonymous namespace\)::staged_kernel//g'
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  for v in new old; do
    LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH $b --device-result --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/device-$v-$round.csv > $OUT/device-$v-$round.log 2>&1; echo "$v $round rc=$? at $((SECONDS-start)) s"
  done
done
for v in new old; do
  LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH $b --device-result --cold --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/cold-$v.csv > $OUT/cold-$v.log 2>&1; echo "cold $v rc=$? at $((SECONDS-start)) s"
done
LD_LIBRARY_PATH=/tmp/lib-new:$LD_LIBRARY_PATH $b --timeline --sizes 24..26 --csv $OUT/timeline.csv > $OUT/timeline.txt 2>&1; echo "timeline rc=$? at $((SECONDS-start)) s"
for v in new old; do echo "== $v"; python3 bench/cuda/reduce_ratios.py $OUT/device-$v-*.csv $OUT/cold-$v.csv | grep -v "^==" | sed -E 's/; (ordered finish|split|reading, (2 KiB|4 KiB x 2|dynamic|4 KiB x 4, dynamic)|plain|register kernel|staged, (3 slots|units of|1 slot))[^;]*//g'; done
grep -E "staged plan order( |, 8 KiB x 1)" $OUT/timeline.txt | grep "f32" | cut -c1-250
cd /tmp && tar czf $R/s2.tgz s2
