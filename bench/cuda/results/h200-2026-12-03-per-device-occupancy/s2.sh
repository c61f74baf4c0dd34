# One H200: the reduction tests on cuda (device_check.sh's targets, which s1.sh built, hold no
# reduction tests): tests/reduce's cuda/* cases with the per-context occupancy and the
# signaling NaN, and tests/float16's cuda cases.
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
( time cmake --build build-gpu -j 16 --target ew_reduce_tests ew_float16_tests ) > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"; grep -E " error|error:" $OUT/build.log | head
timeout 240 build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*' --gtest_brief=1 > $OUT/reduce-tests.log 2>&1; echo "reduce tests (cuda) rc=$? at $((SECONDS-start)) s"; tail -4 $OUT/reduce-tests.log
build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*SignalingNan*:cuda/*SpecialValues*' > $OUT/snan.log 2>&1; grep -E "OK \]|FAILED|Failure" $OUT/snan.log | head
timeout 100 build-gpu/tests/float16/ew_float16_tests --gtest_filter='*/cuda:Float16Cuda.*' --gtest_brief=1 > $OUT/float16-tests.log 2>&1; echo "float16 tests (cuda) rc=$? at $((SECONDS-start)) s"; tail -3 $OUT/float16-tests.log
cd /tmp && tar czf $R/s2.tgz s2
