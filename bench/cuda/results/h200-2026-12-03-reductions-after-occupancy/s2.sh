# One H200: the bench kernels with the finish a fixed order needs ("ordered finish": each CUDA
# block's sum in its own slot, the last block adding the slots in block order) beside their
# atomicAdd finish, and occupancy() returning its answer as it is: reduce_check.sh --kernels.
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
start=$SECONDS
bash bench/cuda/reduce_check.sh --kernels -DEW_ENABLE_HIGHWAY=OFF > $OUT/check.log 2>&1; echo "reduce_check rc=$? at $((SECONDS-start)) s"
grep -E "^===|PASSED|FAILED|SUMMARY" $OUT/check.log | head -40
grep -E "^(sum|dot) " $OUT/ratios.txt | grep -oE "^(sum|dot) f.. 2\^[0-9]+|ordered finish \([a-z -]+\) [^;]*" | paste -d' ' - - - | head -80
cd /tmp && tar czf $R/s2.tgz s2
