# A second H200 (a freshly started machine): s1 again, without the tests, 2^23..2^26, to tell
# whether the staged kernel reads the f32 dot faster than the register kernel at 2^24..2^25 on
# this GPU too, as on s1's machine (where the twelfth round had it 0.1-2.0 % slower), and to
# repeat the change's figures. The same benchmark binary, "new" (the working tree) and "old"
# (split-widening.patch reversed), interleaved, warm twice and cold once.
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
D=bench/cuda/results/h200-2026-12-04-widening
start=$SECONDS
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$? at $((SECONDS-start)) s"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv,noheader
regs() {
  cuobjdump --dump-resource-usage build-gpu/core/libelementwise.so 2>&1 | grep -A1 -E "staged_kernel" |
    grep -oE "Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+" | paste -d' ' - - - - | c++filt |
    sed -E 's/Function void ew::detail::cuda::\(anonymous namespace\)::staged_kernel//; s/\(float const.*\) REG/ REG/; s/\(double const.*\) REG/ REG/'
}
mkdir -p /tmp/lib-old /tmp/lib-new
cp -a build-gpu/core/libelementwise.so* /tmp/lib-new/; regs > $OUT/registers-new.txt
patch -R -p1 < $D/split-widening.patch > /dev/null && cmake --build build-gpu -j 16 --target elementwise > $OUT/build-old.log 2>&1; echo "old build rc=$? at $((SECONDS-start)) s"
cp -a build-gpu/core/libelementwise.so* /tmp/lib-old/; regs > $OUT/registers-old.txt
patch -p1 < $D/split-widening.patch > /dev/null
paste $OUT/registers-old.txt $OUT/registers-new.txt | sed -E 's/<\(ew::detail::plan::Kind\)//g'
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  for v in new old; do
    LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH timeout -k 5 90 $b --device-result --only sum,dot --sizes 23..26 --reps 15 --csv $OUT/device-$v-$round.csv > $OUT/device-$v-$round.log 2>&1; echo "$v $round rc=$? at $((SECONDS-start)) s"
  done
done
for v in new old; do
  LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH timeout -k 5 90 $b --device-result --cold --only sum,dot --sizes 23..26 --reps 15 --csv $OUT/cold-$v.csv > $OUT/cold-$v.log 2>&1; echo "cold $v rc=$? at $((SECONDS-start)) s"
done
python3 - $OUT <<'PY'
import re, sys, glob
out = sys.argv[1]
rows = {}
for v in ("new", "old"):
    for f in sorted(glob.glob(f"{out}/device-{v}-*.log")) + [f"{out}/cold-{v}.log"]:
        for line in open(f):
            m = re.match(r"(sum|dot)\s+(f32|f64) (2\^2[3-6]) (ew cuda \([^)]*\))\s+([0-9.]+) GB/s", line)
            if m: rows.setdefault(m.groups()[:4], {}).setdefault(v, []).append(float(m.group(5)))
for k, d in sorted(rows.items()):
    if "new" in d and "old" in d:
        print(*k, " new/old", " ".join("%.3f" % (a / b) for a, b in zip(d["new"], d["old"])))
PY
for f in $OUT/device-new-1.csv $OUT/device-old-1.csv $OUT/cold-new.csv $OUT/cold-old.csv; do python3 bench/cuda/reduce_ratios.py $f | grep -E "^==|sum f32|dot f32" | head -12; done
cd /tmp && tar czf $R/s2.tgz s2
