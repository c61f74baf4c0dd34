#!/usr/bin/env bash
# The runs of this folder, as they ran on a GPU machine without network access (one H200), from
# the repository root, in order. .kokkos-cuda: a Kokkos 4.6.99 install for sm_90. s1.sh and s2.sh
# ran on a tree with tile-rolled.patch applied (EW_KOKKOS_TILE_ROLLED, off unless defined; not
# kept) and the read pass's first kernel under its first flag name, --read-bound; s3.sh on the
# tree after the first review (--read-pass); s4.sh on the final tree. Their outputs are the
# files s1-* to s4-* here.

# ---- s1.sh ----
# One H200: build (cuda + kokkos for sm_90); the kokkos suites on the GPU (on one GPU the
# thread's GPU is always Kokkos' own, so the new keeping of it is not exercised); the cuda API suite; ew-roofline's expressions at 2^20 and 2^22, cold, with
# the read-only pass over each point's bytes (--read-bound).
set -u
R=$OUT; export OUT=/tmp/s1; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 16 --target ew-roofline ew_kokkos_tests ew_kokkos_expr_device_tests ew_kokkos_reduce_device_tests ew_tests ew_cuda_tests > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
$b/kokkos/ew_kokkos_expr_device_tests --gtest_brief=1 > $OUT/kokkos-expr-device.log 2>&1; echo "kokkos expr device rc=$?"; tail -2 $OUT/kokkos-expr-device.log
$b/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 > $OUT/kokkos-reduce-device.log 2>&1; echo "kokkos reduce device rc=$?"; tail -2 $OUT/kokkos-reduce-device.log
$b/ew_tests --gtest_filter='cuda/*:kokkos/*:BadInputTable.*' --gtest_brief=1 > $OUT/ew-tests.log 2>&1; echo "ew_tests rc=$?"; tail -2 $OUT/ew-tests.log
$b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -2 $OUT/cuda-tests.log
build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends cuda --sizes 20,22 --cold --read-bound > $OUT/roofline-bound.txt 2>&1; echo "roofline rc=$?"
sed -n '/^expr /,$p' $OUT/roofline-bound.txt | head -70
grep -B2 -A8 "read-only sum" $OUT/roofline-bound.txt | head -20
cd /tmp && tar czf $R/s1.tgz s1; ls -la $R

# ---- s2.sh ----
# One H200, after s1.sh: the tile walk's double transcendental steps one pair of groups at a time
# (EW_KOKKOS_TILE_ROLLED=1: the queued double walk of one register at 72 registers with no
# stack at 7 blocks; at 8 blocks 64 registers and 32 bytes of stack), silu with kokkos beside cuda, warm, 2^24 / 2^26 / 2^28; the landed walk
# first and last (the method's own spread).
set -u
R=$OUT; export OUT=/tmp/s2; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
SIZES=24,26,28 ROOFLINE_ARGS="--expressions silu" bash bench/cuda/kokkos_variants.sh \
  landed="" rolled="-DEW_KOKKOS_TILE_ROLLED=1" rolled8="-DEW_KOKKOS_TILE_ROLLED=1 -DEW_KOKKOS_TILE_BLOCKS_F64=8" \
  landed2="" > $OUT/variants.log 2>&1; echo "variants rc=$?"
grep -E "^=== |kokkos on the GPU|silu .*(f32|f64) .*[0-9]\.[0-9]{3}$|TileExpr" $OUT/variants.log | grep -v "^  silu.*cuda" | head -80
cd /tmp && tar czf $R/s2.tgz s2; ls -la $R

# ---- s3.sh ----
# One H200, the final tree: the kokkos and cuda suites on the GPU, the random expressions on
# kokkos and cuda bit for bit against scalar, the kokkos reductions, and compute-sanitizer
# memcheck on the kokkos backend's tests and on the bad-input tests of memory of another GPU.
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 16 --target ew_expr_tests ew_tests ew_kokkos_tests ew_kokkos_expr_device_tests ew_reduce_tests ew_cuda_tests ew-roofline > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
( timeout 420 $b/expr/ew_expr_tests --gtest_filter='kokkos/*' > $OUT/expr-kokkos.log 2>&1; echo "expr kokkos rc=$?" > $OUT/expr-kokkos-rc.txt ) &
( timeout 420 $b/expr/ew_expr_tests --gtest_filter='cuda/*' > $OUT/expr-cuda.log 2>&1; echo "expr cuda rc=$?" > $OUT/expr-cuda-rc.txt ) &
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
$b/reduce/ew_reduce_tests --gtest_filter='kokkos/*:cuda/*' --gtest_brief=1 > $OUT/reduce-tests.log 2>&1; echo "reduce tests rc=$?"; tail -3 $OUT/reduce-tests.log
$b/ew_tests --gtest_filter='cuda/*:kokkos/*:BadInputTable.*:*DeviceMemoryOfAnotherGpu*:SpanDevice*' --gtest_brief=1 > $OUT/ew-tests.log 2>&1; echo "ew_tests rc=$?"; tail -2 $OUT/ew-tests.log
$b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -2 $OUT/cuda-tests.log
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 7 $b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.*' --gtest_brief=1 > $OUT/memcheck-kokkos.log 2>&1; echo "memcheck kokkos rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-kokkos.log | tail -3
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 7 $b/ew_tests --gtest_filter='*DeviceMemoryOfAnotherGpu*:SpanDevice*' --gtest_brief=1 > $OUT/memcheck-bad-input.log 2>&1; echo "memcheck bad input rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-bad-input.log | tail -3
wait
cat $OUT/expr-kokkos-rc.txt $OUT/expr-cuda-rc.txt; tail -n 3 $OUT/expr-kokkos.log $OUT/expr-cuda.log; grep -c '^\[       OK' $OUT/expr-kokkos.log $OUT/expr-cuda.log
build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends cuda,kokkos --sizes 26 --warm > $OUT/roofline.txt 2>&1; echo "roofline rc=$?"
sed -n '/^kokkos on the GPU/,/^$/p' $OUT/roofline.txt; grep -A5 "^one call on" $OUT/roofline.txt
# The read-only pass with every array's next 4 strides in flight (was 2), at 2^20 and 2^22, cold.
build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends cuda --sizes 20,22 --cold --read-pass > $OUT/roofline-pass.txt 2>&1; echo "roofline pass rc=$?"
sed -n '/^the read-only pass/,/^$/p' $OUT/roofline-pass.txt; grep -E "read-only sum" $OUT/roofline-pass.txt
cd /tmp && tar czf $R/s3.tgz s3; ls -la $R

# ---- s4.sh ----
# One H200, the final tree after the second review: the kokkos backend's tests and the three
# Kokkos initialization orders (one process each: ew::finalize() and the finalize at exit) on
# the GPU, under memcheck too.
set -u
R=$OUT; export OUT=/tmp/s4; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DEW_ENABLE_CUDA=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 16 --target ew_kokkos_tests ew_kokkos_init_library_first ew_kokkos_init_application_first ew_kokkos_init_exit > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests/kokkos
$b/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -3 $OUT/kokkos-tests.log
for t in library_first application_first; do $b/ew_kokkos_init_$t > $OUT/init-$t.log 2>&1; echo "init $t rc=$?"; tail -2 $OUT/init-$t.log; done
$b/ew_kokkos_init_exit > $OUT/init-exit.log 2>&1; echo "init exit rc=$?"; tail -2 $OUT/init-exit.log
compute-sanitizer --tool memcheck --error-exitcode 7 $b/ew_kokkos_init_library_first > $OUT/memcheck-init.log 2>&1; echo "memcheck init rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck-init.log | tail -3
cd /tmp && tar czf $R/s4.tgz s4; ls -la $R
