# One H200: the expression cache tests after 7c0f023 (their directories removed by
# std::filesystem::remove_all instead of a shell's rm -rf), each in its own process as ctest runs them.
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
cmake --build build-gpu -j 16 --target ew_cuda_expr_tests ew_cuda_expr_codegen_tests > $OUT/build.log 2>&1; echo "build rc=$?"
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
timeout 200 ctest --test-dir build-gpu -R 'CudaExpr' -j 8 --timeout 150 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|Skipped|Passed" $OUT/ctest.log | tail -40
echo "cache directories left in /tmp: $(ls -d /tmp/ew_cuda_expr_* /tmp/ew_expr_cache_test.* 2>/dev/null | wc -l)"
cd /tmp && tar czf $R/s4.tgz s4
