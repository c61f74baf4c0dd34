# One H200: can a launch be made to fail (starved_launch_probe.cu); which of the library's
# Kokkos kernels have a stack frame; the failed-launch test with the launches checked in
# on_device and without (on-device-check.patch reversed, where it is expected to fail); the
# kokkos suites on the GPU.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
d=bench/cuda/results/h200-2026-12-02-kokkos-launches
ln -sfn $PWD/build-kokkos-cuda /tmp/kokkos-cuda
export KOKKOS_ROOT=/tmp/kokkos-cuda
nvcc -arch=sm_90 -O2 -Xptxas -v $d/starved_launch_probe.cu -o /tmp/probe > $OUT/probe-build.log 2>&1 && /tmp/probe > $OUT/probe.log 2>&1; echo "probe rc=$?"; cat $OUT/probe.log
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
t="ew_kokkos_failed_launch_tests ew_kokkos_tests ew_kokkos_expr_device_tests ew_kokkos_reduce_device_tests"
( time cmake --build build-gpu-kokkos -j 16 --target $t ) > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E " error|error:" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
PATH=$PATH:/usr/local/cuda/bin
cuobjdump -res-usage build-gpu-kokkos/core/libelementwise.so > $OUT/res-usage.txt 2>&1
grep -B1 -E "STACK:[1-9]" $OUT/res-usage.txt | grep -oE "Function [^:]*" | c++filt | cut -c1-160 | sort | uniq -c | head -40
b=build-gpu-kokkos/tests/kokkos
$b/ew_kokkos_failed_launch_tests > $OUT/failed-launch.log 2>&1; echo "failed launch, checked, rc=$?"; grep -E "starved|OK \]|FAILED|SKIPPED|Failure|Expected|error|Which|trace|silu|add f64" $OUT/failed-launch.log | head -30
patch -R -p1 < $d/on-device-check.patch > /dev/null && echo "unchecked launches restored"
cmake --build build-gpu-kokkos -j 16 --target ew_kokkos_failed_launch_tests > $OUT/build-unchecked.log 2>&1; echo "build unchecked rc=$?"
$b/ew_kokkos_failed_launch_tests > $OUT/failed-launch-unchecked.log 2>&1; echo "failed launch, unchecked, rc=$?"; grep -E "starved|OK \]|FAILED|SKIPPED|Failure|Expected|error|Which|trace|silu|add f64" $OUT/failed-launch-unchecked.log | head -30
patch -p1 < $d/on-device-check.patch > /dev/null && echo "checked launches back"
cmake --build build-gpu-kokkos -j 16 --target $t > $OUT/build-again.log 2>&1; echo "build again rc=$?"
for x in ew_kokkos_tests ew_kokkos_expr_device_tests ew_kokkos_reduce_device_tests; do
  timeout 200 $b/$x --gtest_brief=1 > $OUT/$x.log 2>&1; echo "$x rc=$?"; tail -3 $OUT/$x.log
done
cd /tmp && tar czf $R/s1.tgz s1
