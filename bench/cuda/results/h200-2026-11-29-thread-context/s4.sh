# One H200, the final scope (a scope that finds its context current reads nothing at its end):
# the new tests alone and the cuda and kokkos suites, init orders, the scope's cost twice, and
# the random-expression suite on cuda in 8 shards side by side (NVRTC compiles on the CPU).
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 16 --target ew_cuda_tests ew_kokkos_tests ew_kokkos_init_library_first ew_kokkos_init_application_first ew_kokkos_init_exit ew-cuda-expr-bench ew_expr_tests > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
for s in 0 1 2 3 4 5 6 7; do ( GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 280 $b/expr/ew_expr_tests --gtest_filter='cuda/*' > $OUT/expr-cuda-$s.log 2>&1; echo "shard $s rc=$?" > $OUT/expr-cuda-$s.rc ) & done
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext DeviceSelection; do $b/cuda/ew_cuda_tests --gtest_filter="Cuda.$t" > $OUT/cuda-$t.log 2>&1; echo "cuda $t rc=$?"; grep -E "OK \]|FAILED  \]|SKIPPED \]|INFO|Failure|after:" $OUT/cuda-$t.log | head -6; done
for t in LeavesAThreadWithoutAContextWithNone KeepsTheApplicationsOwnContext KeepsTheThreadsGpuAndRunsOnItsOwn; do $b/kokkos/ew_kokkos_tests --gtest_filter="KokkosBackend.$t" > $OUT/kokkos-$t.log 2>&1; echo "kokkos $t rc=$?"; grep -E "OK \]|FAILED  \]|SKIPPED \]|INFO|Failure|after:" $OUT/kokkos-$t.log | head -6; done
$b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
for t in library_first application_first; do $b/kokkos/ew_kokkos_init_$t > $OUT/init-$t.log 2>&1; echo "init $t rc=$?"; tail -1 $OUT/init-$t.log; done
$b/kokkos/ew_kokkos_init_exit > $OUT/init-exit.log 2>&1; echo "init exit rc=$?"; tail -1 $OUT/init-exit.log
wait
cat $OUT/expr-cuda-*.rc; cat $OUT/expr-cuda-*.log | grep -c '^\[       OK'; cat $OUT/expr-cuda-*.log | grep -E '^\[  (FAILED|SKIPPED) ' | sort -u | head; grep -h "tests ran\|PASSED" $OUT/expr-cuda-*.log
for k in 1 2; do build-gpu-kokkos/bench/cuda/ew-cuda-expr-bench --call-cost > $OUT/call-cost-$k.txt 2>&1; echo "call-cost $k rc=$?"; grep -E "scope|cuCtxSet|cudaGetDevice|device spans" $OUT/call-cost-$k.txt; done
cd /tmp && tar czf $R/s4.tgz s4; ls -la $R
