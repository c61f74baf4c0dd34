# One H200: the reductions after their occupancy moved from process-wide statics into each
# context's Reducer (e90cbc8): reduce_check.sh --kernels, the script of the 2026-11-27 final
# runs, so that its ratios compare with h200-2026-11-27-final-reductions/.
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
start=$SECONDS
bash bench/cuda/reduce_check.sh --kernels -DEW_ENABLE_HIGHWAY=OFF > $OUT/check.log 2>&1; echo "reduce_check rc=$? at $((SECONDS-start)) s"
grep -E "^===|PASSED|FAILED|SUMMARY" $OUT/check.log | head -40
cat $OUT/ratios.txt 2>/dev/null | head -80
cd /tmp && tar czf $R/s1.tgz s1
