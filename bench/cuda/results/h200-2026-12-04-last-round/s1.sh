# One H200: the staged kernel's last, partial round of units dealt warp by warp (every SM its
# share; last-round-s1.patch), after the seventeenth round's bench kernels showed the f64 cells'
# reading part at 2^24 go when every SM reads its share of the last round.
# Tests (the cuda reductions) and the sanitizers on the staged kernel's tests; the registers
# of the staged kernels; the same benchmark binary with the library as built here ("new") and
# with the patch reversed ("old"), interleaved, sum and dot 2^24..2^26 warm twice and cold once.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
D=bench/cuda/results/h200-2026-12-04-last-round
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_TESTS=ON > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew_reduce_tests ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
timeout -k 10 200 build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*' > $OUT/tests.log 2>&1; echo "tests rc=$? at $((SECONDS-start)) s"
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]" $OUT/tests.log
regs() {
  cuobjdump --dump-resource-usage build-gpu/core/libelementwise.so 2>&1 | grep -A1 -E "staged_kernel" |
    grep -oE "Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+" | paste -d' ' - - - - | c++filt |
    sed -E 's/Function void ew::detail::cuda::\(anonymous namespace\)::staged_kernel//; s/\(float const.*\) REG/ REG/; s/\(double const.*\) REG/ REG/'
}
regs > $OUT/registers-new.txt
mkdir -p /tmp/lib-new /tmp/lib-old && cp -a build-gpu/core/libelementwise.so* /tmp/lib-new/
patch -R -p1 < $D/last-round-s1.patch > /dev/null && cmake --build build-gpu -j 16 --target elementwise > $OUT/build-old.log 2>&1; echo "old build rc=$? at $((SECONDS-start)) s"
cp -a build-gpu/core/libelementwise.so* /tmp/lib-old/
regs > $OUT/registers-old.txt
paste $OUT/registers-old.txt $OUT/registers-new.txt
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  for v in new old; do
    LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH timeout -k 5 90 $b --device-result --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/device-$v-$round.csv > $OUT/device-$v-$round.log 2>&1; echo "$v $round rc=$? at $((SECONDS-start)) s"
  done
done
for v in new old; do
  LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH timeout -k 5 90 $b --device-result --cold --only sum,dot --sizes 24..26 --reps 15 --csv $OUT/cold-$v.csv > $OUT/cold-$v.log 2>&1; echo "cold $v rc=$? at $((SECONDS-start)) s"
done
for v in new old; do echo "== $v"; python3 bench/cuda/reduce_ratios.py $OUT/device-$v-*.csv $OUT/cold-$v.csv | grep -v "^==" | sed -E 's/; (ordered finish|split|reading, (2 KiB|4 KiB x 2|dynamic|4 KiB x 4, dynamic)|plain|register kernel|staged, (3 slots|units of|1 slot))[^;]*//g'; done
# The sanitizers last (the library as built here again): the staged kernel's tests.
cp -a /tmp/lib-new/libelementwise.so* build-gpu/core/
for tool in memcheck racecheck synccheck; do
  timeout -k 10 100 compute-sanitizer --tool $tool --error-exitcode 7 build-gpu/tests/reduce/ew_reduce_tests \
    --gtest_filter='cuda/ReduceGrid.StagedKernelGivesTheSameBits/*' --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$? at $((SECONDS-start)) s"
  grep -E "SUMMARY|PASSED|FAILED" $OUT/$tool.log | head -3
done
cd /tmp && tar czf $R/s1.tgz s1
