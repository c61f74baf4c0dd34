# One H200: the reductions asking each context's device for their kernels' occupancy, and a
# signaling NaN among the special values: device_check.sh's build, `ctest -L gpu`, fuzz.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
targets=$(sed -n '/^targets=(/,/)/p' bench/cuda/device_check.sh | tr -d '()' | sed 's/targets=//')
( time cmake --build build-gpu -j 16 --target $targets ) > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"; tail -3 $OUT/build.log
build-gpu/tools/ew-info > $OUT/info.log 2>&1; cat $OUT/info.log
timeout 340 ctest --test-dir build-gpu -L gpu --output-on-failure -j 8 --timeout 300 > $OUT/ctest.log 2>&1; echo "ctest -L gpu rc=$? at $((SECONDS-start)) s"
tail -22 $OUT/ctest.log
timeout 60 build-gpu/tests/fuzz/ew_fuzz --seconds 30 > $OUT/fuzz.log 2>&1; echo "fuzz rc=$? at $((SECONDS-start)) s"; tail -4 $OUT/fuzz.log
cd /tmp && tar czf $R/s1.tgz s1
