#!/usr/bin/env bash
# the kokkos reductions' nodes in mapped pinned memory (working tree) against a copy in pageable
# memory (.snap-prev: d6c59cf): the reductions' test on the GPU and its memcheck, then
# ew-roofline's reductions, kokkos beside cuda, 2 rounds in rotating order
set -u
R=$OUT; export OUT=/tmp/mapped; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
source tools/gpu/unpack_deps.sh; ew_unpack_deps .deps
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
for t in mapped=. copied=.snap-prev; do name=${t%%=*} dir=${t#*=}
  targets=ew-roofline; [[ $name == mapped ]] && targets="ew-roofline ew_kokkos_tests"
  ( cmake -S $dir -B /tmp/b-$name -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT \
    > $OUT/$name-configure.log 2>&1 && cmake --build /tmp/b-$name -j 8 --target $targets > $OUT/$name-build.log 2>&1; echo "$name build rc=$?" ) &
done; wait
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
/tmp/b-mapped/tests/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/tests.log 2>&1; echo "tests rc=$?"; tail -2 $OUT/tests.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 /tmp/b-mapped/tests/kokkos/ew_kokkos_tests \
  --gtest_filter='KokkosBackend.Reductions*' > $OUT/reduce-memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/reduce-memcheck.log
args="--ops copy --no-expressions --backends cuda,kokkos --dtypes f32,f64 --sizes 20,22,24,26,28 --warm --no-peers"
for round in 1 2; do order="mapped copied"; [[ $round == 2 ]] && order="copied mapped"
  for name in $order; do
    /tmp/b-$name/bench/roofline/ew-roofline $args > $OUT/$name-run$round.txt 2>&1; echo "$name run$round rc=$?"
  done
done
python3 - <<'PY'
import glob,re,collections
t=collections.defaultdict(list)
for f in sorted(glob.glob('/tmp/mapped/*-run*.txt')):
    name=f.split('/')[-1].split('-run')[0]; cur={}
    for l in open(f):
        m=re.match(r'gpu +(f\d+) +(2\^\d+) +(sum|dot|norm2) +(cuda|kokkos) +([\d.]+) us',l)
        if m: cur[(m.group(1),m.group(2),m.group(3),m.group(4))]=float(m.group(5))
    for k,v in cur.items():
        if k[3]=='kokkos': t[(name,)+k[:3]].append('%.2fus/%.3f' % (v, cur[k[:3]+('cuda',)]/v))
for k in sorted(t): print(' '.join(k), ' '.join(t[k]))
PY
cd /tmp && tar czf $R/mapped.tgz mapped; ls -la $R
