# One H200: s2's one failure, cuda/ExprRandom.MatchesScalarBitForBit/n255, replayed from its
# case seed: five plain runs, then memcheck and racecheck once each.
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew_expr_tests > $OUT/build.log 2>&1; echo "build rc=$?"
export EW_EXPR_CASE_SEED=1909665778242589821
f='cuda/ExprRandom.MatchesScalarBitForBit/n255'
for r in 1 2 3 4 5; do build-gpu/tests/expr/ew_expr_tests --gtest_filter=$f > $OUT/replay$r.log 2>&1; echo "replay $r rc=$?"; done
grep -m3 -E "Failure|is input|expected" $OUT/replay1.log
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool build-gpu/tests/expr/ew_expr_tests --gtest_filter=$f > $OUT/$tool.log 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $OUT/$tool.log | head -4
done
cd /tmp && tar czf $R/s3.tgz s3
