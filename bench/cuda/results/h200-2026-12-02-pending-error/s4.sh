# One H200: the staged kernel's shared memory asked of the device before it is set (no refused
# call left as the last error), the one-runtime test with the pending error checked right after
# the staged sum (the test hook that says which kernel ran asked after the context is gone);
# the same test against the committed staged_resident (staged-resident-asks-first.patch
# reversed); the reduction tests on cuda, and memcheck of the one-runtime test.
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
d=bench/cuda/results/h200-2026-12-02-pending-error
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( time cmake --build build-gpu -j 16 --target ew_cuda_one_runtime_tests ew_reduce_tests ) > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E " error|error:" $OUT/build.log | head
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
one() { build-gpu/tests/cuda/ew_cuda_one_runtime_tests > $OUT/$1.log 2>&1; echo "one runtime, $1: rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Which|Actual|after|floats" $OUT/$1.log | head -14; }
one asks-first
compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 7 build-gpu/tests/cuda/ew_cuda_one_runtime_tests > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -1 $OUT/memcheck.log
timeout 300 build-gpu/tests/reduce/ew_reduce_tests --gtest_filter='cuda/*' --gtest_brief=1 > $OUT/reduce-tests.log 2>&1; echo "reduce tests (cuda) rc=$?"; tail -3 $OUT/reduce-tests.log
patch -R -p1 < $d/staged-resident-asks-first.patch > /dev/null && cmake --build build-gpu -j 16 --target ew_cuda_one_runtime_tests > $OUT/build-committed.log 2>&1
one committed-staged-resident
patch -p1 < $d/staged-resident-asks-first.patch > /dev/null
cd /tmp && tar czf $R/s4.tgz s4
