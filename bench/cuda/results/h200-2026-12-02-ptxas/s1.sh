# One H200: the case that failed (case seed 1909665778242589821, n = 255) and its written-out
# program (ExprPastFailure) with the codegen fix, then the same tree with the fix reverted
# (the-fix.patch applied in reverse, in a copy): the failure should come back there alone.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
D=bench/cuda/results/h200-2026-12-02-ptxas
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# The copy without the fix, configured beside it.
rm -rf /tmp/nofix && mkdir /tmp/nofix && tar --exclude=./build-gpu -cf - . | tar -xf - -C /tmp/nofix
(cd /tmp/nofix && { git apply -R $D/the-fix.patch || patch -R -p1 < $D/the-fix.patch; } > $OUT/revert.log 2>&1 && echo "is_comparison left: $(grep -c is_comparison backends/cuda/codegen.cpp)" && bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/nofix-configure.log 2>&1) || { echo "revert/configure failed"; tail $OUT/revert.log $OUT/nofix-configure.log; }
cmake --build build-gpu -j 16 --target ew_expr_tests ew_cuda_expr_codegen_tests > $OUT/build.log 2>&1; echo "build rc=$?"
(cd /tmp/nofix && cmake --build build-gpu -j 16 --target ew_expr_tests > $OUT/nofix-build.log 2>&1); echo "nofix build rc=$?"
run() {  # $1: label, $2: tree; the replay, then ExprPastFailure, each in a fresh cache
  export EW_CACHE_DIR=/tmp/cache-$1; rm -rf $EW_CACHE_DIR
  EW_EXPR_CASE_SEED=1909665778242589821 $2/build-gpu/tests/expr/ew_expr_tests --gtest_filter='cuda/ExprRandom.MatchesScalarBitForBit/n255' > $OUT/$1-replay.log 2>&1; echo "$1 replay rc=$?"
  grep -m1 -E "is input|is 0x|expected" $OUT/$1-replay.log
  $2/build-gpu/tests/expr/ew_expr_tests --gtest_filter='cuda/ExprPastFailure.*' > $OUT/$1-past.log 2>&1; echo "$1 ExprPastFailure rc=$?"
  grep -E "n=[0-9]+ offsets" $OUT/$1-past.log | cut -c1-220 | head -9
}
run fix $PWD
run nofix /tmp/nofix
# With the fix: the whole cuda expression suite and the codegen tests.
unset EW_CACHE_DIR
timeout 300 build-gpu/tests/expr/ew_expr_tests --gtest_filter='cuda/*' > $OUT/fix-cuda-expr.log 2>&1; echo "cuda/* expr suite rc=$?"; tail -3 $OUT/fix-cuda-expr.log
timeout 120 build-gpu/tests/cuda/ew_cuda_expr_codegen_tests > $OUT/fix-codegen.log 2>&1; echo "codegen rc=$?"; tail -2 $OUT/fix-codegen.log
cd /tmp && tar czf $R/s1.tgz s1
