# One H200: the f32 sum's staged kernel with a ring of one piece and one CUDA block an SM by
# default where the memory is fast an SM (2^24..2^25 on 132 SMs): reduce_check.sh --kernels
# (the cuda reduction tests, memcheck, racecheck and synccheck on the kernels' tests, the
# kernels' registers, then ew-cuda-reduce-bench --device-result warm and cold with both
# kernels forced beside the default, cub, cuBLAS and the atomic kernel).
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
start=$SECONDS
bash bench/cuda/reduce_check.sh --kernels -DEW_ENABLE_HIGHWAY=OFF > $OUT/check.log 2>&1; echo "reduce_check rc=$? at $((SECONDS-start)) s"
grep -E "^===|PASSED|FAILED|SUMMARY" $OUT/check.log | head -40
grep -E "^==|^sum f32 2\^2[2-8]|^(sum f64|dot f..) 2\^2[45]" $OUT/ratios.txt | sed -E 's/; ordered finish[^;]*//; s/; reading, [^;]*//g; s/; (register kernel|staged, 3 slots|staged, units of 8|staged, units of 32)[^;]*//g' | head -60
cd /tmp && tar czf $R/s4.tgz s4
