# One H200: the kokkos context mends of 7505384/2b95057 on a GPU (the instance built with Kokkos'
# context pushed; the per-thread default stream; the refused stream's context check), the cuda and
# kokkos suites, Kokkos' three initialization orders, memcheck on the context tests. s2.sh: the host. Kokkos for CUDA is carried in, built outside the repo.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
mkdir -p /tmp && ln -sfn $PWD/build-kokkos-cuda /tmp/kokkos-cuda
export KOKKOS_ROOT=/tmp/kokkos-cuda
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( time cmake --build build-gpu-kokkos -j 16 --target ew_cuda_tests ew_kokkos_tests ew_kokkos_init_library_first ew_kokkos_init_application_first ew_kokkos_init_exit ) > $OUT/build.log 2>&1; echo "build rc=$?"; tail -3 $OUT/build.log
grep -E "error|warning" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext RunsInABorrowedStreamsOwnContext RunsOnThePerThreadDefaultStream DeviceSelection BorrowedStreamOrdersWithCallerWork; do $b/cuda/ew_cuda_tests --gtest_filter="Cuda.$t" > $OUT/cuda-$t.log 2>&1; echo "cuda $t rc=$?"; grep -E "OK \]|FAILED  \]|SKIPPED \]|INFO|Failure|after:" $OUT/cuda-$t.log | head -6; done
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext KeepsTheApplicationsContextStack RefusesAStreamOfAnotherContext RunsOnThePerThreadDefaultStream RunsOnTheBorrowedStream KeepsTheThreadsGpuAndRunsOnItsOwn; do $b/kokkos/ew_kokkos_tests --gtest_filter="KokkosBackend.$t" > $OUT/kokkos-$t.log 2>&1; echo "kokkos $t rc=$?"; grep -E "OK \]|FAILED  \]|SKIPPED \]|INFO|Failure|after:" $OUT/kokkos-$t.log | head -6; done
$b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
for t in library_first application_first exit; do $b/kokkos/ew_kokkos_init_$t > $OUT/init-$t.log 2>&1; echo "init $t rc=$?"; tail -1 $OUT/init-$t.log; done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 7 $b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.Leaves*:KokkosBackend.Keeps*:KokkosBackend.Refuses*:KokkosBackend.RunsOn*' > $OUT/memcheck-kokkos-context.log 2>&1; echo "memcheck kokkos context rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-kokkos-context.log | tail -3
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 7 $b/cuda/ew_cuda_tests --gtest_filter='Cuda.LeavesAThread*:Cuda.KeepsTheApplications*:Cuda.RunsInABorrowed*:Cuda.RunsOnThePerThread*' > $OUT/memcheck-cuda-context.log 2>&1; echo "memcheck cuda context rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-cuda-context.log | tail -3
cd /tmp && tar czf $R/s1.tgz s1; ls -la $R
