#!/usr/bin/env bash
# kokkos check of the tree (84d7958) (tests incl. the reductions on the GPU), memcheck of the reductions'
# test, then ew-roofline's reductions with kokkos beside cuda: this tree and a3703a8 (.snap-oldred:
# its tree with this tree's bench/roofline/reductions.cpp, which measures kokkos on a GPU)
set -u
R=$OUT; export OUT=/tmp/red; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
git log --oneline -1 > $OUT/commit.txt 2>/dev/null
( sleep 45; cmake -S .snap-oldred -B /tmp/build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT \
    > $OUT/old-configure.log 2>&1 && cmake --build /tmp/build-old -j 6 --target ew-roofline > $OUT/old-build.log 2>&1; echo "old build rc=$?" > $OUT/old-rc.txt ) &
time bash bench/cuda/kokkos_expr_check.sh > $OUT/console.log 2>&1; echo "check rc=$?"
grep -E "tests passed|tests failed|ERROR SUMMARY|RACECHECK SUMMARY|Reductions" $OUT/*.log | head -20
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/kokkos/ew_kokkos_tests \
  --gtest_filter='KokkosBackend.Reductions*' > $OUT/reduce-memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/reduce-memcheck.log
args="--ops copy --no-expressions --backends cuda,kokkos --dtypes f32,f64 --sizes 20,22,24,26,28 --warm"
time build-gpu-kokkos/bench/roofline/ew-roofline $args --json $OUT/red-now.json > $OUT/red-now.txt 2>&1; echo "now rc=$?"
sed -n '/^reductions/,$p' $OUT/red-now.txt | head -70
wait; cat $OUT/old-rc.txt
time /tmp/build-old/bench/roofline/ew-roofline $args --json $OUT/red-before.json > $OUT/red-before.txt 2>&1; echo "before rc=$?"
sed -n '/^reductions/,$p' $OUT/red-before.txt | grep -E "kokkos" | head -30
cd /tmp && tar czf $R/red.tgz red; ls -la $R
