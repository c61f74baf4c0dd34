# One H200: the two pending-error tests as committed (the GPU's primary context current on
# their own thread), the cuda and kokkos suites, then each test against the old code it
# guards (old-*.patch reversed: the launch status read by cudaGetLastError, the kokkos check
# without the error pending as the call began), where it is expected to fail.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
ln -sfn $PWD/build-kokkos-cuda /tmp/kokkos-cuda
export KOKKOS_ROOT=/tmp/kokkos-cuda
d=bench/cuda/results/h200-2026-12-02-pending-error
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( time cmake --build build-gpu-kokkos -j 16 --target ew_cuda_tests ew_kokkos_tests ) > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E " error|error:" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
f='-E OK \]|FAILED  \]|Failure|Expected|Which|after|error'
$b/cuda/ew_cuda_tests --gtest_filter='Cuda.LeavesTheApplicationsPendingErrorAlone' > $OUT/cuda-pending.log 2>&1; echo "cuda pending rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Expected|Which" $OUT/cuda-pending.log | head -12
$b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.LeavesTheApplicationsPendingErrorAlone' > $OUT/kokkos-pending.log 2>&1; echo "kokkos pending rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Expected|Which" $OUT/kokkos-pending.log | head -12
timeout 90 $b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
timeout 60 $b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
patch -R -p1 < $d/old-kernels.patch > /dev/null && patch -R -p1 < $d/old-kokkos-check.patch > /dev/null && echo "old code restored"
( cmake --build build-gpu-kokkos -j 16 --target ew_cuda_tests ew_kokkos_tests ) > $OUT/build-old.log 2>&1; echo "build old rc=$?"
$b/cuda/ew_cuda_tests --gtest_filter='Cuda.LeavesTheApplicationsPendingErrorAlone' > $OUT/cuda-pending-old.log 2>&1; echo "cuda pending, old code, rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Expected|Which" $OUT/cuda-pending-old.log | head -12
$b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.LeavesTheApplicationsPendingErrorAlone' > $OUT/kokkos-pending-old.log 2>&1; echo "kokkos pending, old code, rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Expected|Which" $OUT/kokkos-pending-old.log | head -12
patch -p1 < $d/old-kokkos-check.patch > /dev/null && patch -p1 < $d/old-kernels.patch > /dev/null && echo "committed code back"
cd /tmp && tar czf $R/s1.tgz s1
