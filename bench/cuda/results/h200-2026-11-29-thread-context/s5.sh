# One H200, after the review: the new tree's context tests (each alone, and the cuda and kokkos
# suites), init orders, memcheck on the new cuda tests; and the same new tests built against
# 0.2.1 (6bca3dc with the new test files), which should fail there.
set -u
R=$OUT; export OUT=/tmp/s5; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
mkdir -p /tmp/old && tar xzf .snap-scripts/old.tgz -C /tmp/old && cp -r .deps /tmp/old/
cp tests/gpu_thread_context.hpp /tmp/old/tests/; cp tests/cuda/test_cuda.cpp /tmp/old/tests/cuda/; cp tests/kokkos/test_kokkos.cpp /tmp/old/tests/kokkos/; cp backends/cuda/thread_context.hpp /tmp/old/backends/cuda/
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
(cd /tmp/old && bash tools/gpu/prepare.sh build-old -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure-old.log 2>&1) || { tail $OUT/configure-old.log; exit 1; }
( cmake --build /tmp/old/build-old -j 6 --target ew_cuda_tests ew_kokkos_tests > $OUT/build-old.log 2>&1; echo "build old rc=$?" > $OUT/build-old-rc.txt ) &
time cmake --build build-gpu-kokkos -j 12 --target ew_cuda_tests ew_kokkos_tests ew_kokkos_init_library_first ew_kokkos_init_application_first ew_kokkos_init_exit > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext RunsInABorrowedStreamsOwnContext DeviceSelection; do $b/cuda/ew_cuda_tests --gtest_filter="Cuda.$t" > $OUT/cuda-$t.log 2>&1; echo "cuda $t rc=$?"; grep -E "OK \]|FAILED  \]|INFO|Failure|after:" $OUT/cuda-$t.log | head -6; done
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext KeepsTheThreadsGpuAndRunsOnItsOwn; do $b/kokkos/ew_kokkos_tests --gtest_filter="KokkosBackend.$t" > $OUT/kokkos-$t.log 2>&1; echo "kokkos $t rc=$?"; grep -E "OK \]|FAILED  \]|SKIPPED \]|INFO|Failure|after:" $OUT/kokkos-$t.log | head -6; done
$b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
for t in library_first application_first exit; do $b/kokkos/ew_kokkos_init_$t > $OUT/init-$t.log 2>&1; echo "init $t rc=$?"; tail -1 $OUT/init-$t.log; done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 7 $b/cuda/ew_cuda_tests --gtest_filter='Cuda.LeavesAThread*:Cuda.KeepsTheApplications*:Cuda.RunsInABorrowed*' > $OUT/memcheck-cuda-new.log 2>&1; echo "memcheck cuda new rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-cuda-new.log | tail -3
wait; cat $OUT/build-old-rc.txt
o=/tmp/old/build-old/tests
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext RunsInABorrowedStreamsOwnContext; do $o/cuda/ew_cuda_tests --gtest_filter="Cuda.$t" > $OUT/old-cuda-$t.log 2>&1; echo "0.2.1 cuda $t rc=$?"; grep -E "OK \]|FAILED  \]|after:|another context|under its own" $OUT/old-cuda-$t.log | head -4; done
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext; do $o/kokkos/ew_kokkos_tests --gtest_filter="KokkosBackend.$t" > $OUT/old-kokkos-$t.log 2>&1; echo "0.2.1 kokkos $t rc=$?"; grep -E "OK \]|FAILED  \]|after:|another context|under its own" $OUT/old-kokkos-$t.log | head -4; done
cd /tmp && tar czf $R/s5.tgz s5; ls -la $R
