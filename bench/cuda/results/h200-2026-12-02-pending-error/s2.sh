# One H200: the pending-error test where the library and the test share one CUDA runtime
# (ew_cuda_one_runtime_tests, the test-only static library), then against each piece of the
# old code it guards, one at a time (old-<file>.patch reversed: the op launches' status read
# by cudaGetLastError, the conversion's, the pipeline's unconditional clears, the staged
# kernel's occupancy query's clear), where it is expected to fail; the kokkos test again.
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
ln -sfn $PWD/build-kokkos-cuda /tmp/kokkos-cuda
export KOKKOS_ROOT=/tmp/kokkos-cuda
d=bench/cuda/results/h200-2026-12-02-pending-error
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( time cmake --build build-gpu-kokkos -j 16 --target ew_cuda_one_runtime_tests ew_kokkos_tests ew_cuda_tests ) > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E " error|error:" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
sh tests/cuda/private_runtime.sh nm build-gpu-kokkos/core/libelementwise.so
one() { $b/cuda/ew_cuda_one_runtime_tests > $OUT/$1.log 2>&1; echo "one runtime, $1: rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Expected|Which|Value of|Actual|after|aligned|convert|expression|pipeline|destruction" $OUT/$1.log | grep -v "^\[ RUN" | head -14; }
one committed
$b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.LeavesTheApplicationsPendingErrorAlone' > $OUT/kokkos-pending.log 2>&1; echo "kokkos pending rc=$?"; grep -E "OK \]|FAILED  \]" $OUT/kokkos-pending.log
timeout 90 $b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
for f in kernels convert pipeline reduce; do
  patch -R -p1 < $d/old-$f.patch > /dev/null || { echo "old-$f.patch does not reverse"; continue; }
  cmake --build build-gpu-kokkos -j 16 --target ew_cuda_one_runtime_tests > $OUT/build-old-$f.log 2>&1 || { echo "build old-$f failed"; tail -5 $OUT/build-old-$f.log; }
  one old-$f
  patch -p1 < $d/old-$f.patch > /dev/null
done
cd /tmp && tar czf $R/s2.tgz s2
