# One H200: device_check.sh's configure, build and `ctest -L gpu` steps alone (its target list
# now with the executables of the tests registered at configure time, CudaFailedLaunch among
# them), within the time left.
set -u
R=$OUT; export OUT=/tmp/s5; mkdir -p $OUT
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
targets=$(sed -n '/^targets=(/,/)/p' bench/cuda/device_check.sh | tr -d '()' | sed 's/targets=//')
( time cmake --build build-gpu -j 16 --target $targets ) > $OUT/build.log 2>&1; echo "build rc=$?"; tail -3 $OUT/build.log
timeout 330 ctest --test-dir build-gpu -L gpu --output-on-failure -j 8 --timeout 300 > $OUT/ctest.log 2>&1; echo "ctest -L gpu rc=$?"
tail -25 $OUT/ctest.log; grep -E "CudaFailedLaunch|starved" $OUT/ctest.log | head
cd /tmp && tar czf $R/s5.tgz s5
