#!/usr/bin/env bash
# H100: (1) the kokkos reductions' grids (tests on the GPU; --extrema against 22bb03a's reduce.hpp,
# 2 rounds; ew-roofline's 16-bit and f32 sums), (2) the cuda probe (ew-info; a build with
# CMAKE_CUDA_ARCHITECTURES=100-real, no code for sm_90: cuda unusable with the reason, not chosen),
# (3) the NVRTC disk key (the expression cache tests, a missing NVRTC), the cuda suites.
set -u
R=$OUT; export OUT=/tmp/c2; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
cmake -S . -B /tmp/b100 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr -DCMAKE_CUDA_ARCHITECTURES=100-real \
  -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF > $OUT/b100-configure.log 2>&1
( cmake --build /tmp/b100 -j 4 --target ew-info > $OUT/b100-build.log 2>&1; echo "b100 build rc=$?" > $OUT/b100-rc.txt ) &
time cmake --build build-gpu-kokkos -j 12 --target elementwise ew-info ew_kokkos_reduce_device_tests ew_reduce_tests ew_kokkos_tests ew-cuda-reduce-bench ew-roofline ew_cuda_tests ew_cuda_expr_tests ew_tests > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
mkdir -p /tmp/lib-new && cp -a build-gpu-kokkos/core/libelementwise.so* /tmp/lib-new/
( cp .snap-scripts/v/reduce-base.hpp backends/kokkos/reduce.hpp
  cmake --build build-gpu-kokkos -j 4 --target elementwise > $OUT/build-base.log 2>&1; echo "base build rc=$?" >> $OUT/variants-rc.txt
  mkdir -p /tmp/lib-base && cp -a build-gpu-kokkos/core/libelementwise.so* /tmp/lib-base/
  cp .snap-scripts/v/reduce-new.hpp backends/kokkos/reduce.hpp ) &
BASE_LD=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH=/tmp/lib-new:$BASE_LD
build-gpu-kokkos/tools/ew-info > $OUT/ew-info.txt 2>&1; echo "ew-info rc=$?"; cat $OUT/ew-info.txt
build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/direct.log 2>&1; echo "direct rc=$?"; tail -1 $OUT/direct.log
build-gpu-kokkos/tests/reduce/ew_reduce_tests > $OUT/reduce-tests.log 2>&1; echo "reduce suites (cuda and kokkos) rc=$?"; tail -1 $OUT/reduce-tests.log
build-gpu-kokkos/tests/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.Reductions*' > $OUT/api.log 2>&1; echo "api rc=$?"; tail -1 $OUT/api.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -1 $OUT/memcheck.log
build-gpu-kokkos/tests/cuda/ew_cuda_tests --gtest_filter='CudaProbe.*:Cuda.KernelArchitecture*:Cuda.LargeArrays*' > $OUT/cuda-probe.log 2>&1; echo "cuda probe tests rc=$?"; grep -E "OK|FAILED|INFO" $OUT/cuda-probe.log | head
build-gpu-kokkos/tests/ew_tests --gtest_filter='cuda/*:kokkos/*:BadInputTable.*' --gtest_brief=1 > $OUT/ew-tests.log 2>&1; echo "ew_tests cuda/kokkos rc=$?"; tail -2 $OUT/ew-tests.log
build-gpu-kokkos/tests/cuda/ew_cuda_expr_tests --gtest_filter='*Cache*' > $OUT/expr-cache.log 2>&1; echo "expr cache rc=$?"; grep -E "OK|FAILED|ms" $OUT/expr-cache.log | head
EW_NVRTC=/nonexistent/libnvrtc.so.13 build-gpu-kokkos/tests/cuda/ew_cuda_expr_tests --gtest_filter='CudaExprNoNvrtc.*' > $OUT/no-nvrtc.log 2>&1; echo "no nvrtc rc=$?"; tail -1 $OUT/no-nvrtc.log
EW_NVRTC=/nonexistent/libnvrtc.so.13 build-gpu-kokkos/tools/ew-info 2>&1 | tail -2
ls ~/.cache/elementwise 2>/dev/null | head -3
wait; cat $OUT/variants-rc.txt $OUT/b100-rc.txt
/tmp/b100/tools/ew-info > $OUT/b100-ew-info.txt 2>&1; echo "b100 ew-info rc=$?"; cat $OUT/b100-ew-info.txt
for round in 1 2; do
  for v in new base; do
    LD_LIBRARY_PATH=/tmp/lib-$v:$BASE_LD build-gpu-kokkos/bench/cuda/ew-cuda-reduce-bench --extrema --sizes 20..28 > $OUT/extrema-$v-$round.txt 2>&1; echo "extrema $v $round rc=$?"
  done
done
grep -c MISMATCH $OUT/extrema-*.txt
args="--ops copy --no-expressions --backends cuda,kokkos --dtypes f16,bf16,f32,f64 --sizes 20,22,24,26,28 --warm"
build-gpu-kokkos/bench/roofline/ew-roofline $args > $OUT/red-new.txt 2>&1; echo "roofline rc=$?"
cd /tmp && tar czf $R/c2.tgz c2; ls -la $R
