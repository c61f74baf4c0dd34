#!/usr/bin/env bash
# The three runs of this folder, as they ran on a GPU machine without network access (one H100
# each), from the repository root, in order. .snap-scripts/v/reduce-{new,base}.hpp: this tree's and
# 22bb03a's backends/kokkos/reduce.hpp. .kokkos-cuda: a Kokkos 4.6.99 install for sm_90.
# ---- the grids, the probe and the NVRTC key (top folder) ----
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

# ---- arch/ ----
# H100: ew-info of builds whose kernels were compiled without sm_90 code: 100-real (no code an
# sm_90 GPU can run: cuda must be unusable, with the reason, and not the automatic choice) and
# 80 (compute_80 PTX compiled by the driver: usable, kernels as sm_80). Each build's own
# library (no LD_LIBRARY_PATH to another build's).
set -u
R=$OUT; export OUT=/tmp/ar; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
source tools/gpu/unpack_deps.sh; ew_unpack_deps .deps > /dev/null
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for a in 100-real 80; do
  ( cmake -S . -B /tmp/b$a -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr -DCMAKE_CUDA_ARCHITECTURES=$a \
      -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=ON > $OUT/b$a-configure.log 2>&1 &&
    cmake --build /tmp/b$a -j 8 --target ew-info ew_cuda_tests > $OUT/b$a-build.log 2>&1; echo "b$a build rc=$?" > $OUT/b$a-rc.txt ) &
done
wait; cat $OUT/b*-rc.txt; grep -h "architectures" $OUT/b*-configure.log
for a in 100-real 80; do
  echo "== $a"; /tmp/b$a/tools/ew-info > $OUT/b$a-ew-info.txt 2>&1; echo "ew-info rc=$?"; cat $OUT/b$a-ew-info.txt
  ldd /tmp/b$a/tools/ew-info | grep elementwise
  /tmp/b$a/tests/cuda/ew_cuda_tests --gtest_filter='CudaProbe.*:Cuda.KernelArchitecture*' > $OUT/b$a-probe.log 2>&1; echo "probe tests rc=$?"; grep -E "OK|FAILED|INFO|Failure|Expected|Which|error" $OUT/b$a-probe.log | head -12
done
cd /tmp && tar czf $R/ar.tgz ar; ls -la $R

# ---- final/ (asked for an H200, ran on an H100) ----
# The final tree's checks on one GPU: the reduction suites (cuda and kokkos: result spans in
# device, managed and pinned memory, n = 0 among them), memcheck of the result-span tests, the
# bad-input tables (ops and expressions) on cuda, the cuda probe test, the kokkos direct tests.
set -u
R=$OUT; export OUT=/tmp/fi; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 16 --target ew_reduce_tests ew_tests ew_expr_tests ew_cuda_tests ew_kokkos_reduce_device_tests ew-info ew-roofline > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-kokkos/tools/ew-info | head -6
build-gpu-kokkos/tests/reduce/ew_reduce_tests --gtest_brief=1 > $OUT/reduce.log 2>&1; echo "reduce suites rc=$?"; tail -3 $OUT/reduce.log
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 7 build-gpu-kokkos/tests/reduce/ew_reduce_tests --gtest_filter='cuda/Reduce.StoresIntoAResultSpan*:kokkos/Reduce.StoresIntoAResultSpan*' --gtest_brief=1 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
build-gpu-kokkos/tests/ew_tests --gtest_filter='BadInputTable.*:cuda/BadInput*' > $OUT/bad-input.log 2>&1; echo "bad input rc=$?"; grep -E "table|PASSED|FAILED" $OUT/bad-input.log
build-gpu-kokkos/tests/expr/ew_expr_tests --gtest_filter='*BadInput*' > $OUT/expr-bad-input.log 2>&1; echo "expr bad input rc=$?"; grep -E "kinds|PASSED|FAILED" $OUT/expr-bad-input.log
build-gpu-kokkos/tests/cuda/ew_cuda_tests --gtest_filter='CudaProbe.*' > $OUT/probe.log 2>&1; echo "probe rc=$?"; grep -E "OK|FAILED" $OUT/probe.log
build-gpu-kokkos/tests/kokkos/ew_kokkos_reduce_device_tests > $OUT/direct.log 2>&1; echo "direct rc=$?"; tail -1 $OUT/direct.log
# What holds kokkos's 16-bit sums at 0.77-0.88 of cuda: both kernels' f16 sum at 2^26 under ncu.
args="--ops copy --no-expressions --dtypes f16 --sizes 26 --warm --reps 3"
which ncu || ls /usr/local/cuda/bin/ncu
NCU=$(which ncu || echo /usr/local/cuda/bin/ncu)
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
timeout 150 $NCU $S --kernel-name regex:WarpBlocks --launch-count 3 build-gpu-kokkos/bench/roofline/ew-roofline $args --backends kokkos > $OUT/ncu-kokkos-f16.txt 2>&1; echo "ncu kokkos rc=$?"
timeout 150 $NCU $S --kernel-name regex:sum_kernel --launch-count 3 build-gpu-kokkos/bench/roofline/ew-roofline $args --backends cuda > $OUT/ncu-cuda-f16.txt 2>&1; echo "ncu cuda rc=$?"
grep -E "WarpBlocks|sum_kernel|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Stall Long|Warp Cycles Per Issued" $OUT/ncu-*.txt | head -80
cd /tmp && tar czf $R/fi.tgz fi; ls -la $R

# ---- arch2/ (the probe reading CMAKE_CUDA_ARCHITECTURES, after the review) ----
# H100: ew-info and the probe tests of builds for 90 (its own code), 100-real (no code an sm_90 GPU
# can run: cuda unusable with the reason, not the automatic choice) and 80 (compute_80 PTX compiled
# by the driver: usable, kernels as sm_80): the probe reads CMAKE_CUDA_ARCHITECTURES, and the test
# checks it against the driver (kernel_architecture). Each build with its own library.
set -u
R=$OUT; export OUT=/tmp/ar2; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
source tools/gpu/unpack_deps.sh; ew_unpack_deps .deps > /dev/null
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for a in 90 100-real 80; do
  ( cmake -S . -B /tmp/b$a -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr -DCMAKE_CUDA_ARCHITECTURES=$a \
      -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=ON > $OUT/b$a-configure.log 2>&1 &&
    cmake --build /tmp/b$a -j 5 --target ew-info ew_cuda_tests > $OUT/b$a-build.log 2>&1; echo "b$a build rc=$?" > $OUT/b$a-rc.txt ) &
done
wait; cat $OUT/b*-rc.txt; grep -h "architectures" $OUT/b*-configure.log
for a in 90 100-real 80; do
  echo "== $a"; /tmp/b$a/tools/ew-info > $OUT/b$a-ew-info.txt 2>&1; echo "ew-info rc=$?"; cat $OUT/b$a-ew-info.txt
  ldd /tmp/b$a/tools/ew-info | grep elementwise
  /tmp/b$a/tests/cuda/ew_cuda_tests --gtest_filter='CudaProbe.*:CudaArchitectures.*:Cuda.KernelArchitecture*' > $OUT/b$a-probe.log 2>&1; echo "probe tests rc=$?"; grep -E "OK|FAILED|INFO|Failure|Expected|Which|error" $OUT/b$a-probe.log | head -12
done
cd /tmp && tar czf $R/ar2.tgz ar2; ls -la $R
