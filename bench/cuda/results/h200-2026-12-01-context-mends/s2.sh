# The 16-core host of the H200 machine, the GPU idle: the Highway reductions against the OpenMP
# reduction loop, 5 rounds in rotating order (the f64 prefetch rule of 9ce3a30 as landed).
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
AB_PROGRAM=bench/cpu/ew-reduce-bench timeout 540 bash bench/cpu/ab_compare.sh $OUT/host-reduce 5 landed=. -- --sizes 22..26 > $OUT/host-reduce.log 2>&1; echo "host reduce rc=$?"; tail -3 $OUT/host-reduce.log
python3 bench/cpu/reduce_medians.py $OUT/host-reduce > $OUT/host-reduce/medians.txt 2>&1; cat $OUT/host-reduce/medians.txt | head -40
cd /tmp && tar czf $R/s2.tgz s2; ls -la $R
