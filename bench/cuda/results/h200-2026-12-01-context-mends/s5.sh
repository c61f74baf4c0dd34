# One H200: an error the application has yet to read is neither taken for the library's nor
# cleared (the cuda launches' own status; the kokkos reductions' launches checked against the
# error pending as the call began): the two new tests alone, then the cuda suite and the kokkos
# backend's suite.
set -u
R=$OUT; export OUT=/tmp/s5; mkdir -p $OUT
ln -sfn $PWD/build-kokkos-cuda /tmp/kokkos-cuda
export KOKKOS_ROOT=/tmp/kokkos-cuda
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( time cmake --build build-gpu-kokkos -j 16 --target ew_cuda_tests ew_kokkos_tests ) > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E " error|error:" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
$b/cuda/ew_cuda_tests --gtest_filter='Cuda.LeavesTheApplicationsPendingErrorAlone' > $OUT/cuda-pending.log 2>&1; echo "cuda pending rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Expected|Which|after" $OUT/cuda-pending.log | head -12
$b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.LeavesTheApplicationsPendingErrorAlone' > $OUT/kokkos-pending.log 2>&1; echo "kokkos pending rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Expected|Which|after" $OUT/kokkos-pending.log | head -12
timeout 60 $b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
timeout 40 $b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
cd /tmp && tar czf $R/s5.tgz s5
