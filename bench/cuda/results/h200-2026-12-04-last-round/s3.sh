# One H200: where s2's microsecond at 2^24 goes. Three builds of the library under one benchmark
# binary, interleaved: "old" (the landed code), "new" (s2's kernel, last-round-kernel.patch) and
# "fin" (s2's kernel with every round dealt by units as before, last-round-finish-only.patch: its
# code, registers and finish, without the warp deal; timing only, the same bits). Sum and dot
# 2^24..2^25, warm twice and cold once; the staged kernels' registers of each.
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
D=bench/cuda/results/h200-2026-12-04-last-round
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
mkdir -p /tmp/lib-old /tmp/lib-new /tmp/lib-fin
cp -a build-gpu/core/libelementwise.so* /tmp/lib-old/; regs > $OUT/registers-old.txt
for v in new fin; do
  p=$D/last-round-kernel.patch; [ $v = fin ] && p=$D/last-round-finish-only.patch
  patch -p1 < $p > /dev/null && cmake --build build-gpu -j 16 --target elementwise > $OUT/build-$v.log 2>&1; echo "$v build rc=$? at $((SECONDS-start)) s"
  cp -a build-gpu/core/libelementwise.so* /tmp/lib-$v/; regs > $OUT/registers-$v.txt
  patch -R -p1 < $p > /dev/null
done
paste $OUT/registers-old.txt $OUT/registers-new.txt $OUT/registers-fin.txt | sed -E 's/<\(ew::detail::plan::Kind\)//g; s/STACK:528 LOCAL:0//g'
b=build-gpu/bench/cuda/ew-cuda-reduce-bench
for round in 1 2; do
  for v in new fin old; do
    LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH timeout -k 5 90 $b --device-result --only sum,dot --sizes 24..25 --reps 15 --csv $OUT/device-$v-$round.csv > $OUT/device-$v-$round.log 2>&1; echo "$v $round rc=$? at $((SECONDS-start)) s"
  done
done
for v in new fin old; do
  LD_LIBRARY_PATH=/tmp/lib-$v:$LD_LIBRARY_PATH timeout -k 5 90 $b --device-result --cold --only sum,dot --sizes 24..25 --reps 15 --csv $OUT/cold-$v.csv > $OUT/cold-$v.log 2>&1; echo "cold $v rc=$? at $((SECONDS-start)) s"
done
python3 - $OUT <<'PY'
import re, sys, glob
out = sys.argv[1]
rows = {}
for v in ("new", "fin", "old"):
    for f in sorted(glob.glob(f"{out}/device-{v}-*.log")) + [f"{out}/cold-{v}.log"]:
        for line in open(f):
            m = re.match(r"(sum|dot)\s+(f32|f64) (2\^2[45]) ew cuda \(default\)\s+([0-9.]+) GB/s", line)
            if m: rows.setdefault(m.groups()[:3], {}).setdefault(v, []).append(float(m.group(4)))
for k, d in sorted(rows.items()):
    print(*k, " new/old", " ".join("%.3f" % (a / b) for a, b in zip(d["new"], d["old"])),
          "  fin/old", " ".join("%.3f" % (a / b) for a, b in zip(d["fin"], d["old"])))
PY
cd /tmp && tar czf $R/s3.tgz s3
