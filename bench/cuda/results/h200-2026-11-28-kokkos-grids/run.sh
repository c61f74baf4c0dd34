#!/usr/bin/env bash
# The run of this folder, as it ran on a GPU machine without network access, from the repository
# root: kokkos reductions' grids sized to each kernel's resident blocks. The reductions' tests on
# the GPU (direct, suites, api, memcheck) with this tree, then ew-cuda-reduce-bench --extrema and
# ew-roofline's reductions for libelementwise built from four backends/kokkos/reduce.hpp, each
# copied in from .snap-scripts/v/ and the library rebuilt: new (this tree), base (22bb03a's),
# x8 (new with x8.patch: 16-bit min/max at 8 blocks, 32 registers) and r32 (new with r32.patch:
# 16-bit sums 32 rows ahead at 6 blocks). The benchmarks load each through LD_LIBRARY_PATH.
# .kokkos-cuda: a Kokkos 4.6.99 install for sm_90.
set -u
R=$OUT; export OUT=/tmp/kg; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 16 --target elementwise ew_kokkos_reduce_device_tests ew_reduce_tests ew_kokkos_tests ew-cuda-reduce-bench ew-roofline > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
mkdir -p /tmp/lib-new && cp -a build-gpu-kokkos/core/libelementwise.so* /tmp/lib-new/
( for v in base x8 r32; do
    cp .snap-scripts/v/reduce-$v.hpp backends/kokkos/reduce.hpp
    cmake --build build-gpu-kokkos -j 4 --target elementwise > $OUT/build-$v.log 2>&1; echo "$v build rc=$?" >> $OUT/variants-rc.txt
    mkdir -p /tmp/lib-$v && cp -a build-gpu-kokkos/core/libelementwise.so* /tmp/lib-$v/
  done
  cp .snap-scripts/v/reduce-new.hpp backends/kokkos/reduce.hpp ) &
BASE_LD=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH=/tmp/lib-new:$BASE_LD
build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/direct.log 2>&1; echo "direct rc=$?"; tail -3 $OUT/direct.log; grep -m5 "Failure\|plan " $OUT/direct.log
build-gpu-kokkos/tests/reduce/ew_reduce_tests --gtest_filter='kokkos/*' > $OUT/reduce-kokkos-tests.log 2>&1; echo "suites rc=$?"; tail -2 $OUT/reduce-kokkos-tests.log
build-gpu-kokkos/tests/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.Reductions*' > $OUT/api.log 2>&1; echo "api rc=$?"; tail -2 $OUT/api.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
wait; cat $OUT/variants-rc.txt; md5sum /tmp/lib-*/libelementwise.so.0.1.0
for round in 1 2; do
  for v in new base x8; do
    LD_LIBRARY_PATH=/tmp/lib-$v:$BASE_LD build-gpu-kokkos/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 > $OUT/extrema-$v-$round.txt 2>&1; echo "extrema $v $round rc=$?"
  done
done
grep -c MISMATCH $OUT/extrema-*.txt
args="--ops copy --no-expressions --backends cuda,kokkos --dtypes f16,bf16,f64 --sizes 20,22,24,26,28 --warm"
for v in new base r32; do
  LD_LIBRARY_PATH=/tmp/lib-$v:$BASE_LD build-gpu-kokkos/bench/roofline/ew-roofline $args > $OUT/red-$v.txt 2>&1; echo "roofline $v rc=$?"
done
for v in new base r32; do echo "== $v"; grep -E "^gpu .*(sum|dot|norm2) +(cuda|kokkos) " $OUT/red-$v.txt | head -80; done
cd /tmp && tar czf $R/kg.tgz kg; ls -la $R
