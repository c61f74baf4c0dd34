# One H200: the context scope's own cost (ew-cuda-expr-bench --call-cost, three runs), then the
# random-expression suite on cuda alone (last session's ran beside other suites and hit its limit).
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu -j 16 --target ew-cuda-expr-bench ew_expr_tests > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for k in 1 2 3; do build-gpu/bench/cuda/ew-cuda-expr-bench --call-cost > $OUT/call-cost-$k.txt 2>&1; echo "call-cost $k rc=$?"; done
for f in $OUT/call-cost-*.txt; do echo "== $f"; grep -E "scope|cuCtxSet|cudaGetDevice|device spans" $f; done
timeout 380 build-gpu/tests/expr/ew_expr_tests --gtest_filter='cuda/*' > $OUT/expr-cuda.log 2>&1; echo "expr cuda rc=$?"; tail -n 4 $OUT/expr-cuda.log; grep -c '^\[       OK' $OUT/expr-cuda.log
cd /tmp && tar czf $R/s3.tgz s3; ls -la $R
