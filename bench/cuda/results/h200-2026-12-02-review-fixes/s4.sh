# One H200: s3's replay once more with debug-alias.patch applied (test code only, not kept):
# the operands' addresses and element 20 of every input's own buffer printed before and after
# the call (downloads, so each waits for the stream first).
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
git apply bench/cuda/results/h200-2026-12-02-review-fixes/debug-alias.patch || exit 1
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew_expr_tests > $OUT/build.log 2>&1; echo "build rc=$?"
export EW_EXPR_CASE_SEED=1909665778242589821
f='cuda/ExprRandom.MatchesScalarBitForBit/n255'
build-gpu/tests/expr/ew_expr_tests --gtest_filter=$f > $OUT/plain.log 2>&1; echo "plain rc=$?"
EW_DEBUG_ALIAS=1 build-gpu/tests/expr/ew_expr_tests --gtest_filter=$f > $OUT/dump.log 2>&1; echo "dump rc=$?"
grep -E "before|after|is input|Failure" $OUT/dump.log | tail -40
git apply -R bench/cuda/results/h200-2026-12-02-review-fixes/debug-alias.patch
# Then the same replay on the tree this session started from (cb692d2, carried as a tarball):
# is the failure older than the session's changes?
mkdir -p /tmp/old && tar xzf old-tree.tgz -C /tmp/old && cp -a .deps /tmp/old/ && cd /tmp/old
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/old-configure.log 2>&1 || { tail $OUT/old-configure.log; exit 1; }
cmake --build build-gpu -j 16 --target ew_expr_tests > $OUT/old-build.log 2>&1; echo "old build rc=$?"
build-gpu/tests/expr/ew_expr_tests --gtest_filter=$f > $OUT/old.log 2>&1; echo "cb692d2 replay rc=$?"; grep -m2 -E "is input|expected" $OUT/old.log
cd /tmp && tar czf $R/s4.tgz s4
