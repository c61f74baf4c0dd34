#!/usr/bin/env bash
# The runs of this folder, as they ran on a GPU machine without network access (one H200), from
# the repository root, in order. .kokkos-cuda: a Kokkos 4.6.99 install for sm_90. s2.sh ran on
# a tree with tile-rolled.patch applied (EW_KOKKOS_TILE_ROLLED, off by default; not kept).

# ---- s1.sh ----
# One H200: build (cuda + kokkos for sm_90); the kokkos suites on the GPU (every call now keeps
# the thread's GPU); the cuda API suite; ew-roofline's expressions at 2^20 and 2^22, cold, with
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
# (EW_KOKKOS_TILE_ROLLED=1: no spill at 72 registers, 7 blocks; at 8 blocks 64 registers and
# 40 bytes spilled), silu with kokkos beside cuda, warm, 2^24 / 2^26 / 2^28; the landed walk
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
