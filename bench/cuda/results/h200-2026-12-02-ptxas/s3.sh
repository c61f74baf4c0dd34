# One H200: the two kernels of the CPU scan whose SASS counts differ between ptxas 13.0 and
# 13.5 (fewer DSETP with 13.0, aligned case; README), replayed from their case seeds at three
# sizes (n = 255 and 4097: aligned, one-off and staggered layouts; 2^20 + 3: staggered).
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew_expr_tests > $OUT/build.log 2>&1; echo "build rc=$?"
for seed in 9363844811969303730 7721649980874932942; do
  for n in 255 4097 1048579; do
    EW_EXPR_CASE_SEED=$seed build-gpu/tests/expr/ew_expr_tests --gtest_filter=cuda/ExprRandom.MatchesScalarBitForBit/n$n > $OUT/$seed-$n.log 2>&1
    echo "seed $seed n=$n rc=$? $(grep -cE '^\[       OK' $OUT/$seed-$n.log) passed"; grep -m1 -E "is 0x|expected" $OUT/$seed-$n.log
  done
done
cd /tmp && tar czf $R/s3.tgz s3
