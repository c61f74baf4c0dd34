#!/usr/bin/env bash
# the kokkos reductions' direct test (grids of 1 and 3 warps) and the public-API one on the GPU, memcheck
set -u
R=$OUT; export OUT=/tmp/fw; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
source tools/gpu/unpack_deps.sh; ew_unpack_deps .deps
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/gpu.txt
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr -DEW_ENABLE_CUDA=OFF \
  -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_BENCH=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build /tmp/b -j 16 --target ew_kokkos_reduce_device_tests ew_kokkos_tests > $OUT/build.log 2>&1; echo "build rc=$?"
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
/tmp/b/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/direct.log 2>&1; echo "direct rc=$?"; tail -3 $OUT/direct.log
/tmp/b/tests/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.Reductions*' > $OUT/api.log 2>&1; echo "api rc=$?"; tail -2 $OUT/api.log
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 7 /tmp/b/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
cd /tmp && tar czf $R/fw.tgz fw
