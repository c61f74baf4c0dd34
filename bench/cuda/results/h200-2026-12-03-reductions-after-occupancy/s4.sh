# One H200: the library's staged kernel with the f32 sums' slots cut in two 4 KiB pieces (the
# bench's 4 KiB x 4 ring, s3): reduce_check.sh --kernels (tests, sanitizers, registers, two warm
# and two cold runs of ew-cuda-reduce-bench --device-result beside the bench kernels).
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
start=$SECONDS
bash bench/cuda/reduce_check.sh --kernels -DEW_ENABLE_HIGHWAY=OFF > $OUT/check.log 2>&1; echo "reduce_check rc=$? at $((SECONDS-start)) s"
grep -E "^===|PASSED|FAILED|SUMMARY" $OUT/check.log | head -30
grep staged_kernel $OUT/reduce-registers.log | head -8
grep -E "^sum f32 2\^2[2-8]" $OUT/ratios.txt | sed -E 's/; (register kernel|staged, 3|staged, units)[^;]*//g; s/ \(plain [^)]*\)//g; s/; reading, [^;]*//g'
cd /tmp && tar czf $R/s4.tgz s4
