#!/usr/bin/env bash
# The two runs of this folder, as they ran on a GPU machine without network access, from the
# repository root: h100/ (the check, --extrema against 1a35f20 built beside, ew-roofline) and h200/
# (the check after the test mends of 0a990ef, --extrema). .snap-old: 1a35f20's tree with this tree's
# bench/cuda/reduce_bench.cu (which times kokkos beside). .kokkos-cuda: a Kokkos 4.6.99 install for sm_90.
# ---- h100 ----
# kokkos min/max on the warps: the kokkos check (tests incl. the reductions' suites on the GPU,
# memcheck), ew-cuda-reduce-bench --extrema with kokkos beside (this tree, and 1a35f20 with this
# tree's bench: the block walk), ew-roofline's reductions with kokkos beside cuda.
set -u
R=$OUT; export OUT=/tmp/kr; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
( sleep 60; source tools/gpu/unpack_deps.sh; ew_unpack_deps .deps
  cmake -S .snap-old -B /tmp/build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT \
    > $OUT/old-configure.log 2>&1 && cmake --build /tmp/build-old -j 6 --target ew-cuda-reduce-bench > $OUT/old-build.log 2>&1; echo "old build rc=$?" > $OUT/old-rc.txt ) &
time bash bench/cuda/expr_check.sh --kokkos-only --no-bench > $OUT/console.log 2>&1; echo "check rc=$?"
grep -E "tests passed|tests failed|ERROR SUMMARY|RACECHECK SUMMARY|FAILED" $OUT/*.log | head -30
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
time cmake --build build-gpu-kokkos -j 16 --target ew-cuda-reduce-bench ew-roofline > $OUT/bench-build.log 2>&1; echo "bench build rc=$?"
wait; cat $OUT/old-rc.txt
for round in 1 2; do
  build-gpu-kokkos/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 --csv $OUT/extrema-now-$round.csv > $OUT/extrema-now-$round.txt 2>&1; echo "now $round rc=$?"
  /tmp/build-old/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 --csv $OUT/extrema-before-$round.csv > $OUT/extrema-before-$round.txt 2>&1; echo "before $round rc=$?"
done
grep -E "kokkos|MISMATCH" $OUT/extrema-now-1.txt | head -40
grep -E "kokkos" $OUT/extrema-before-1.txt | head -40
args="--ops copy --no-expressions --backends cuda,kokkos --dtypes f32,f64 --sizes 20,22,24,26,28 --warm"
time build-gpu-kokkos/bench/roofline/ew-roofline $args --json $OUT/red-roofline.json > $OUT/red-roofline.txt 2>&1; echo "roofline rc=$?"
sed -n '/^reductions/,$p' $OUT/red-roofline.txt | head -70
cd /tmp && tar czf $R/kr.tgz kr; ls -la $R
# ---- h200 ----
# the kokkos check again (the reductions' suites on the GPU after the test mends), then
# ew-cuda-reduce-bench --extrema with kokkos beside, 2 rounds
set -u
R=$OUT; export OUT=/tmp/kr2; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
time bash bench/cuda/expr_check.sh --kokkos-only --no-bench > $OUT/console.log 2>&1; echo "check rc=$?"
grep -E "tests passed|tests failed|ERROR SUMMARY|RACECHECK SUMMARY|FAILED" $OUT/*.log | head -30
grep -E "^\s*[0-9]+ - " $OUT/expr-kokkos-ctest.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-kokkos/tests/reduce/ew_reduce_tests --gtest_filter='kokkos/*' > $OUT/reduce-kokkos-tests.log 2>&1; echo "reduce kokkos rc=$?"; tail -3 $OUT/reduce-kokkos-tests.log
time cmake --build build-gpu-kokkos -j 16 --target ew-cuda-reduce-bench > $OUT/bench-build.log 2>&1; echo "bench build rc=$?"
for round in 1 2; do
  build-gpu-kokkos/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 --csv $OUT/extrema-$round.csv > $OUT/extrema-$round.txt 2>&1; echo "extrema $round rc=$?"
done
grep -E "kokkos|MISMATCH" $OUT/extrema-1.txt | head -40
cd /tmp && tar czf $R/kr2.tgz kr2; ls -la $R
