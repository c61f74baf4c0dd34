# One H200: the final tree (the host pipeline's constructor, staging_bytes' bound, the copy
# team's thread failure, the fatal error codes, multi-device waits): device_check.sh's
# build, `ctest -L gpu`, the new cases, and compute-sanitizer memcheck on the pipeline's and
# the fault tests' filters (the out-of-memory test stays out: its API errors are on purpose).
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
targets=$(sed -n '/^targets=(/,/)/p' bench/cuda/device_check.sh | tr -d '()' | sed 's/targets=//')
( time cmake --build build-gpu -j 16 --target $targets ) > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"; tail -3 $OUT/build.log
timeout 340 ctest --test-dir build-gpu -L gpu --output-on-failure -j 8 --timeout 300 > $OUT/ctest.log 2>&1; echo "ctest -L gpu rc=$? at $((SECONDS-start)) s"
tail -22 $OUT/ctest.log | grep -v "MultiGpu"
build-gpu/tests/cuda/ew_cuda_tests --gtest_filter='Cuda.OutOfMemory*:CudaCopyTeam.*:CudaErrors.*' > $OUT/cuda-new.log 2>&1; echo "new cases rc=$?"; grep -E "OK|FAIL" $OUT/cuda-new.log
source bench/cuda/check_common.sh
{ sanitize memcheck build-gpu/tests/cuda/ew_cuda_tests 'Cuda.Pipeline*:Cuda.Managed*'
  sanitize memcheck build-gpu/tests/cuda/ew_cuda_fault_tests 'CudaFaults.*'; } > $OUT/memcheck.log 2>&1
echo "memcheck at $((SECONDS-start)) s"; sanitized $OUT/memcheck.log
cd /tmp && tar czf $R/s2.tgz s2
