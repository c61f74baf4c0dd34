# One H200: the one-runtime test as committed (the context's first staged sum before the error
# is raised), memcheck of it, and again against old-kernels.patch reversed (expected to fail).
set -u
R=$OUT; export OUT=/tmp/s7; mkdir -p $OUT
d=bench/cuda/results/h200-2026-12-02-pending-error
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( time cmake --build build-gpu -j 16 --target ew_cuda_one_runtime_tests ) > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E " error|error:" $OUT/build.log | head
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
one() { build-gpu/tests/cuda/ew_cuda_one_runtime_tests > $OUT/$1.log 2>&1; echo "one runtime, $1: rc=$?"; grep -E "OK \]|FAILED  \]|Failure|Which|Actual|after|floats" $OUT/$1.log | head -8; }
one committed
compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 7 build-gpu/tests/cuda/ew_cuda_one_runtime_tests > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -1 $OUT/memcheck.log
patch -R -p1 < $d/old-kernels.patch > /dev/null && cmake --build build-gpu -j 16 --target ew_cuda_one_runtime_tests > $OUT/build-old-kernels.log 2>&1
one old-kernels
patch -p1 < $d/old-kernels.patch > /dev/null
cd /tmp && tar czf $R/s7.tgz s7
