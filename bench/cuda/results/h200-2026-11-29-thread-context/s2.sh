# One H200: the thread's-context change with push/pop (Kokkos pushes its instance's context and
# never pops). New tree and 6bca3dc (old.tgz) side by side: the new tests alone (each its own
# process) and in their suites, init orders, memcheck on the new tests, racecheck on the kokkos
# backend's tests, and the per-call cost old against new, alternated three times.
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv | tee $OUT/gpu.txt
mkdir -p /tmp/old && tar xzf .snap-scripts/old.tgz -C /tmp/old && cp -r .deps /tmp/old/
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
(cd /tmp/old && bash tools/gpu/prepare.sh build-old -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure-old.log 2>&1) || { tail $OUT/configure-old.log; exit 1; }
time cmake --build build-gpu-kokkos -j 16 --target ew_cuda_tests ew_kokkos_tests ew_kokkos_init_library_first ew_kokkos_init_application_first ew_kokkos_init_exit ew-cuda-expr-bench ew-roofline > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
( time cmake --build /tmp/old/build-old -j 8 --target ew-cuda-expr-bench ew-roofline > $OUT/build-old.log 2>&1; echo "build old rc=$?" > $OUT/build-old-rc.txt ) &
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext DeviceSelection; do $b/cuda/ew_cuda_tests --gtest_filter="Cuda.$t" > $OUT/cuda-$t.log 2>&1; echo "cuda $t rc=$?"; grep -E "OK \]|FAILED  \]|SKIPPED \]|INFO|Failure|after:|error" $OUT/cuda-$t.log | head -8; done
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext KeepsTheThreadsGpuAndRunsOnItsOwn; do $b/kokkos/ew_kokkos_tests --gtest_filter="KokkosBackend.$t" > $OUT/kokkos-$t.log 2>&1; echo "kokkos $t rc=$?"; grep -E "OK \]|FAILED  \]|SKIPPED \]|INFO|Failure|after:|error" $OUT/kokkos-$t.log | head -8; done
$b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
for t in library_first application_first; do $b/kokkos/ew_kokkos_init_$t > $OUT/init-$t.log 2>&1; echo "init $t rc=$?"; tail -2 $OUT/init-$t.log; done
$b/kokkos/ew_kokkos_init_exit > $OUT/init-exit.log 2>&1; echo "init exit rc=$?"; tail -2 $OUT/init-exit.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 $b/cuda/ew_cuda_tests --gtest_filter='Cuda.LeavesAThread*:Cuda.KeepsTheApplications*' > $OUT/memcheck-cuda-new.log 2>&1; echo "memcheck cuda new rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-cuda-new.log | tail -3
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 $b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.*' --gtest_brief=1 > $OUT/memcheck-kokkos.log 2>&1; echo "memcheck kokkos rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-kokkos.log | tail -3
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 7 $b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.*' --gtest_brief=1 > $OUT/racecheck-kokkos.log 2>&1; echo "racecheck kokkos rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" $OUT/racecheck-kokkos.log | tail -3
wait; cat $OUT/build-old-rc.txt
for k in 1 2 3; do
  for v in old new; do
    if [ $v = old ]; then B=/tmp/old/build-old; else B=build-gpu-kokkos; fi
    $B/bench/cuda/ew-cuda-expr-bench --call-cost > $OUT/call-cost-$v-$k.txt 2>&1; echo "call-cost $v $k rc=$?"
    $B/bench/roofline/ew-roofline --only-expressions --backends cuda,kokkos --sizes 10 --warm > $OUT/roofline-call-$v-$k.txt 2>&1; echo "roofline $v $k rc=$?"
  done
done
for f in $OUT/call-cost-*.txt; do echo "== $f"; grep -E "^  ew::add \(device|^  expression a\+b \(device" $f; done
for f in $OUT/roofline-call-*.txt; do echo "== $f"; grep -A4 "^one call on" $f | tail -4; done
cd /tmp && tar czf $R/s2.tgz s2; ls -la $R
