#!/usr/bin/env bash
# The runs of this folder, as they ran on a GPU machine without network access, from the
# repository root, in order: h100/ (the check at 3e4a4b8, --extrema against 1a35f20 built beside,
# ew-roofline), h200/ (the check after the test mends of 0a990ef, --extrema), vectors-h200/ (every
# dtype read as 16-byte vectors, against 4aea5ba), final-h200/ and final-h100/ (286469a: 16-bit data
# as vectors, f32/f64 element by element, against 4aea5ba). .snap-old and .snap-elem: 1a35f20's and
# 4aea5ba's trees with this tree's bench/cuda/reduce_bench.cu (which times kokkos beside).
# .kokkos-cuda: a Kokkos 4.6.99 install for sm_90. The CSV files were not kept (the .txt files hold
# the same figures).
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

# ---- vectors-h200 (every dtype as 16-byte vectors, against 4aea5ba) ----
# kokkos min/max read as 16-byte vectors: the reductions' tests on the GPU (direct, suites, memcheck),
# then ew-cuda-reduce-bench --extrema (f32, f64, f16, bf16) against 4aea5ba's element loads
# (.snap-elem: its tree with this tree's reduce_bench.cu), alternating, 2 rounds each
set -u
R=$OUT; export OUT=/tmp/kr3; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( cmake -S .snap-elem -B /tmp/build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT \
    > $OUT/old-configure.log 2>&1 && cmake --build /tmp/build-old -j 6 --target ew-cuda-reduce-bench > $OUT/old-build.log 2>&1; echo "old build rc=$?" > $OUT/old-rc.txt ) &
time cmake --build build-gpu-kokkos -j 12 --target ew_kokkos_reduce_device_tests ew_reduce_tests ew_kokkos_tests ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/direct.log 2>&1; echo "direct rc=$?"; tail -3 $OUT/direct.log; grep -m5 "Failure\|plan " $OUT/direct.log
build-gpu-kokkos/tests/reduce/ew_reduce_tests --gtest_filter='kokkos/*' > $OUT/reduce-kokkos-tests.log 2>&1; echo "suites rc=$?"; tail -2 $OUT/reduce-kokkos-tests.log
build-gpu-kokkos/tests/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.Reductions*' > $OUT/api.log 2>&1; echo "api rc=$?"; tail -2 $OUT/api.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
wait; cat $OUT/old-rc.txt
for round in 1 2; do
  build-gpu-kokkos/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 --csv $OUT/extrema-now-$round.csv > $OUT/extrema-now-$round.txt 2>&1; echo "now $round rc=$?"
  /tmp/build-old/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 --csv $OUT/extrema-before-$round.csv > $OUT/extrema-before-$round.txt 2>&1; echo "before $round rc=$?"
done
grep -E "kokkos|MISMATCH" $OUT/extrema-now-1.txt | head -80
cd /tmp && tar czf $R/kr3.tgz kr3; ls -la $R
# ---- final-h200, final-h100 ----
# The vectors-h200 script above again, at 286469a (16-bit data as vectors, f32/f64 element by
# element), once on each GPU, its logs in /tmp/kr4 instead of /tmp/kr3.
# ---- sums16-h200 (ab1d380 and the last read's mends: 16-bit sums widened by the hardware, against 4aea5ba) ----
# kokkos sums of 16-bit data widened by the hardware: the reductions' tests on the GPU (direct with
# f16/bf16 sums, suites, memcheck), then ew-roofline's reductions on f16 and bf16, kokkos beside
# cuda, this tree and 4aea5ba (.snap-elem: the sums' kernels as before), one round each
set -u
R=$OUT; export OUT=/tmp/kr5; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( cmake -S .snap-elem -B /tmp/build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT \
    > $OUT/old-configure.log 2>&1 && cmake --build /tmp/build-old -j 6 --target ew-roofline > $OUT/old-build.log 2>&1; echo "old build rc=$?" > $OUT/old-rc.txt ) &
time cmake --build build-gpu-kokkos -j 12 --target ew_kokkos_reduce_device_tests ew_reduce_tests ew_kokkos_tests ew-roofline ew-cuda-reduce-bench > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/direct.log 2>&1; echo "direct rc=$?"; tail -3 $OUT/direct.log; grep -m5 "Failure\|plan " $OUT/direct.log
build-gpu-kokkos/tests/reduce/ew_reduce_tests --gtest_filter='kokkos/*' > $OUT/reduce-kokkos-tests.log 2>&1; echo "suites rc=$?"; tail -2 $OUT/reduce-kokkos-tests.log
build-gpu-kokkos/tests/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.Reductions*' > $OUT/api.log 2>&1; echo "api rc=$?"; tail -2 $OUT/api.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
args="--ops copy --no-expressions --backends cuda,kokkos --dtypes f16,bf16 --sizes 20,22,24,26,28 --warm"
time build-gpu-kokkos/bench/roofline/ew-roofline $args --json $OUT/red16-now.json > $OUT/red16-now.txt 2>&1; echo "now rc=$?"
wait; cat $OUT/old-rc.txt
time /tmp/build-old/bench/roofline/ew-roofline $args --json $OUT/red16-before.json > $OUT/red16-before.txt 2>&1; echo "before rc=$?"
for f in now before; do echo "== $f"; grep -E "^gpu .*(sum|dot|norm2) +(cuda|kokkos) " $OUT/red16-$f.txt; done
build-gpu-kokkos/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 > $OUT/extrema.txt 2>&1; echo "extrema rc=$?"; grep -c MISMATCH $OUT/extrema.txt
cd /tmp && tar czf $R/kr5.tgz kr5; ls -la $R
# ---- groups-h100 (df88e9e: 16-bit sums on groups of 4 threads a block, against 5fb90e5; asked for an H200, ran on an H100; not kept, groups-h100/group-blocks.patch) ----
# kokkos sums of 16-bit data on groups of 4 threads a block (rows as 16-byte vectors): the
# reductions' tests on the GPU, then ew-roofline's reductions on f16 and bf16, kokkos beside cuda,
# this tree and 5fb90e5 (.snap-w: a lane a thread, widened by the hardware), one round each
set -u
R=$OUT; export OUT=/tmp/kr6; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
( cmake -S .snap-w -B /tmp/build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT \
    > $OUT/old-configure.log 2>&1 && cmake --build /tmp/build-old -j 6 --target ew-roofline > $OUT/old-build.log 2>&1; echo "old build rc=$?" > $OUT/old-rc.txt ) &
time cmake --build build-gpu-kokkos -j 12 --target ew_kokkos_reduce_device_tests ew_reduce_tests ew_kokkos_tests ew-roofline > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/direct.log 2>&1; echo "direct rc=$?"; tail -3 $OUT/direct.log; grep -m5 "Failure\|plan " $OUT/direct.log
build-gpu-kokkos/tests/reduce/ew_reduce_tests --gtest_filter='kokkos/*' > $OUT/reduce-kokkos-tests.log 2>&1; echo "suites rc=$?"; tail -2 $OUT/reduce-kokkos-tests.log
build-gpu-kokkos/tests/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.Reductions*' > $OUT/api.log 2>&1; echo "api rc=$?"; tail -2 $OUT/api.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
args="--ops copy --no-expressions --backends cuda,kokkos --dtypes f16,bf16 --sizes 20,22,24,26,28 --warm"
time build-gpu-kokkos/bench/roofline/ew-roofline $args --json $OUT/red16-now.json > $OUT/red16-now.txt 2>&1; echo "now rc=$?"
wait; cat $OUT/old-rc.txt
time /tmp/build-old/bench/roofline/ew-roofline $args --json $OUT/red16-before.json > $OUT/red16-before.txt 2>&1; echo "before rc=$?"
for f in now before; do echo "== $f"; grep -E "^gpu .*(sum|dot|norm2) +(cuda|kokkos) " $OUT/red16-$f.txt; done
cd /tmp && tar czf $R/kr6.tgz kr6; ls -la $R
