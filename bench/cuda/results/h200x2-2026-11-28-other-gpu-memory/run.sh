#!/usr/bin/env bash
# The runs of this folder, as they ran on a GPU machine without network access (two H200s), from
# the repository root, in order. .kokkos-cuda: a Kokkos 4.6.99 install for sm_90.

# ---- mg1.sh ----
# Two GPUs: build (cuda + kokkos for sm_90), ew-info, the multigpu tests (another GPU's memory),
# the cuda suites, and the untagged operands' cost with the driver's query of 2 and 3 attributes.
set -u
R=$OUT; export OUT=/tmp/mg; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
nvidia-smi topo -m > $OUT/topo.txt 2>&1
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 30 --target elementwise ew-info ew_cuda_multigpu_tests ew_cuda_tests ew_cuda_expr_tests ew-cuda-expr-bench > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
( cmake --build build-gpu-kokkos -j 12 --target ew_tests ew_expr_tests ew_reduce_tests ew_kokkos_tests ew_kokkos_expr_device_tests ew_kokkos_reduce_device_tests ew-roofline > $OUT/build2.log 2>&1; echo "build2 rc=$?" > $OUT/build2-rc.txt ) &
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-kokkos/tools/ew-info > $OUT/ew-info.txt 2>&1; echo "ew-info rc=$?"; head -20 $OUT/ew-info.txt
build-gpu-kokkos/tests/cuda/ew_cuda_multigpu_tests > $OUT/multigpu.log 2>&1; echo "multigpu rc=$?"; grep -E '^\[  (     OK|FAILED|SKIPPED|PASSED)' $OUT/multigpu.log | tail -25
build-gpu-kokkos/tests/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
build-gpu-kokkos/bench/cuda/ew-cuda-expr-bench --call-cost > $OUT/call-cost.log 2>&1; echo "call cost rc=$?"; cat $OUT/call-cost.log
timeout 240 build-gpu-kokkos/tests/cuda/ew_cuda_expr_tests --gtest_brief=1 > $OUT/cuda-expr-tests.log 2>&1; echo "cuda expr tests rc=$?"; tail -3 $OUT/cuda-expr-tests.log
cat $OUT/build2-rc.txt 2>/dev/null
cd /tmp && tar czf $R/mg1.tgz mg; ls -la $R

# ---- mg2.sh ----
# The same machine, after mg1.sh: the kokkos and cuda suites of the other binaries, then
# ew-roofline's expressions with kokkos beside cuda (the resident-grid rule; 2^24, 2^26).
set -u
R=$OUT; export OUT=/tmp/mg2; mkdir -p $OUT
export KOKKOS_ROOT=/tmp/kk/install
wait_build() { for i in $(seq 1 100); do [[ -f /tmp/mg/build2-rc.txt ]] && break; sleep 3; done; cat /tmp/mg/build2-rc.txt; }
wait_build
cmake --build build-gpu-kokkos -j 30 --target ew_tests ew_expr_tests ew_reduce_tests ew_kokkos_tests ew_kokkos_expr_device_tests ew_kokkos_reduce_device_tests ew-roofline > $OUT/build.log 2>&1; echo "build rc=$?"
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
$b/kokkos/ew_kokkos_expr_device_tests --gtest_brief=1 > $OUT/kokkos-expr-device.log 2>&1; echo "kokkos expr device rc=$?"; tail -2 $OUT/kokkos-expr-device.log
$b/kokkos/ew_kokkos_reduce_device_tests --gtest_brief=1 > $OUT/kokkos-reduce-device.log 2>&1; echo "kokkos reduce device rc=$?"; tail -2 $OUT/kokkos-reduce-device.log
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -2 $OUT/kokkos-tests.log
$b/ew_tests --gtest_filter='cuda/*:kokkos/*:BadInputTable.*' --gtest_brief=1 > $OUT/ew-tests.log 2>&1; echo "ew_tests rc=$?"; tail -2 $OUT/ew-tests.log
$b/reduce/ew_reduce_tests --gtest_brief=1 > $OUT/reduce-tests.log 2>&1; echo "reduce tests rc=$?"; tail -2 $OUT/reduce-tests.log
timeout 200 $b/expr/ew_expr_tests --gtest_filter='cuda/*:kokkos/*' --gtest_brief=1 > $OUT/expr-tests.log 2>&1; echo "expr tests rc=$?"; tail -2 $OUT/expr-tests.log
build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends cuda,kokkos --sizes 24,26 --warm > $OUT/roofline.txt 2>&1; echo "roofline rc=$?"
sed -n '/^expr /,$p' $OUT/roofline.txt | head -60
cd /tmp && tar czf $R/mg2.tgz mg2; ls -la $R

# ---- mg3.sh ----
# Two GPUs, the final tree: the multigpu tests (the ordinal asked: several GPUs), then with one
# GPU visible the pointer-kind tests and the call cost (the query of two attributes), and the
# expression suites on cuda and kokkos (bit for bit against scalar).
set -u
R=$OUT; export OUT=/tmp/mg3; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 30 --target elementwise ew-info ew_cuda_multigpu_tests ew_cuda_tests ew-cuda-expr-bench ew_expr_tests > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
# The random expressions on each backend, in the background (cuda's NVRTC compiles on the CPU).
( timeout 420 $b/expr/ew_expr_tests --gtest_filter='cuda/*' > $OUT/expr-cuda.log 2>&1; echo "expr cuda rc=$?" > $OUT/expr-cuda-rc.txt ) &
( timeout 420 $b/expr/ew_expr_tests --gtest_filter='kokkos/*' > $OUT/expr-kokkos.log 2>&1; echo "expr kokkos rc=$?" > $OUT/expr-kokkos-rc.txt ) &
$b/cuda/ew_cuda_multigpu_tests > $OUT/multigpu.log 2>&1; echo "multigpu rc=$?"; grep -E '^\[  (     OK|FAILED|SKIPPED|PASSED)' $OUT/multigpu.log | tail -14
CUDA_VISIBLE_DEVICES=0 $b/cuda/ew_cuda_tests --gtest_filter='CudaPointerKind.*' > $OUT/pointer-kind.log 2>&1; echo "pointer kind (one GPU) rc=$?"; tail -2 $OUT/pointer-kind.log
$b/cuda/ew_cuda_tests --gtest_filter='CudaPointerKind.*' > $OUT/pointer-kind-2gpus.log 2>&1; echo "pointer kind (two GPUs) rc=$?"; tail -2 $OUT/pointer-kind-2gpus.log
wait
cat $OUT/expr-cuda-rc.txt $OUT/expr-kokkos-rc.txt; tail -3 $OUT/expr-cuda.log $OUT/expr-kokkos.log; grep -c '^\[       OK' $OUT/expr-cuda.log $OUT/expr-kokkos.log
CUDA_VISIBLE_DEVICES=0 build-gpu-kokkos/bench/cuda/ew-cuda-expr-bench --call-cost > $OUT/call-cost-one-gpu.log 2>&1; echo "call cost rc=$?"; cat $OUT/call-cost-one-gpu.log
cd /tmp && tar czf $R/mg3.tgz mg3; ls -la $R

# ---- mg4.sh ----
# Two GPUs: a Buffer's span says its GPU (Span::device); the multigpu tests, the cuda and kokkos
# API suites on device 0.
set -u
R=$OUT; export OUT=/tmp/mg4; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 30 --target elementwise ew_cuda_multigpu_tests ew_cuda_tests ew_tests ew_kokkos_tests ew_reduce_tests > $OUT/build.log 2>&1; echo "build rc=$?"
grep -E "error" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
$b/cuda/ew_cuda_multigpu_tests > $OUT/multigpu.log 2>&1; echo "multigpu rc=$?"; grep -E '^\[  (     OK|FAILED|SKIPPED|PASSED)' $OUT/multigpu.log | tail -14; grep -B2 -A8 'Failure' $OUT/multigpu.log | head -40
$b/ew_tests --gtest_filter='cuda/*:kokkos/*:BadInputTable.*' --gtest_brief=1 > $OUT/ew-tests.log 2>&1; echo "ew_tests rc=$?"; tail -2 $OUT/ew-tests.log
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -2 $OUT/kokkos-tests.log
$b/cuda/ew_cuda_tests --gtest_brief=1 > $OUT/cuda-tests.log 2>&1; echo "cuda tests rc=$?"; tail -3 $OUT/cuda-tests.log
$b/reduce/ew_reduce_tests --gtest_brief=1 > $OUT/reduce-tests.log 2>&1; echo "reduce tests rc=$?"; tail -2 $OUT/reduce-tests.log
cd /tmp && tar czf $R/mg4.tgz mg4; ls -la $R

# ---- mg5.sh (last/) ----
# Two GPUs, the final tree: ew_tests on cuda and kokkos (BadInput.DeviceMemoryOfAnotherGpu among
# them) and the multigpu tests.
set -u
R=$OUT; export OUT=/tmp/mg5; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 30 --target elementwise ew_cuda_multigpu_tests ew_tests > $OUT/build.log 2>&1; echo "build rc=$?"
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
$b/ew_tests --gtest_filter='*BadInput.DeviceMemoryOfAnotherGpu*:SpanDevice.*' > $OUT/another-gpu.log 2>&1; echo "another gpu rc=$?"; grep -E '^\[  (     OK|FAILED|SKIPPED|PASSED)' $OUT/another-gpu.log
$b/ew_tests --gtest_filter='cuda/*:kokkos/*:BadInputTable.*' --gtest_brief=1 > $OUT/ew-tests.log 2>&1; echo "ew_tests rc=$?"; tail -2 $OUT/ew-tests.log
$b/cuda/ew_cuda_multigpu_tests --gtest_brief=1 > $OUT/multigpu.log 2>&1; echo "multigpu rc=$?"; tail -2 $OUT/multigpu.log
cd /tmp && tar czf $R/mg5.tgz mg5; ls -la $R

# ---- mg6.sh (mends/) ----
# Two GPUs, after the review mends: kokkos makes its memory and stream on its GPU; the BadInput
# call forms; shards' devices; ew_tests cuda/kokkos; kokkos; multigpu.
set -u
R=$OUT; export OUT=/tmp/mg6; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
time cmake --build build-gpu-kokkos -j 30 --target elementwise ew_cuda_multigpu_tests ew_tests ew_kokkos_tests > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E 'error' $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
b=build-gpu-kokkos/tests
$b/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.MakesItsMemoryAndStream*' > $OUT/kokkos-gpu.log 2>&1; echo "kokkos gpu rc=$?"; grep -E '^\[  (     OK|FAILED|SKIPPED|PASSED)|Failure|Expected|Which' $OUT/kokkos-gpu.log | head
$b/ew_tests --gtest_filter='*BadInput.DeviceMemoryOfAnotherGpu*:SpanDevice.*' > $OUT/another-gpu.log 2>&1; echo "another gpu rc=$?"; grep -E '^\[  (     OK|FAILED|SKIPPED|PASSED)' $OUT/another-gpu.log
$b/ew_tests --gtest_filter='cuda/*:kokkos/*:BadInputTable.*' --gtest_brief=1 > $OUT/ew-tests.log 2>&1; echo "ew_tests rc=$?"; tail -2 $OUT/ew-tests.log
$b/kokkos/ew_kokkos_tests --gtest_brief=1 > $OUT/kokkos-tests.log 2>&1; echo "kokkos tests rc=$?"; tail -2 $OUT/kokkos-tests.log
$b/cuda/ew_cuda_multigpu_tests --gtest_brief=1 > $OUT/multigpu.log 2>&1; echo "multigpu rc=$?"; tail -2 $OUT/multigpu.log
cd /tmp && tar czf $R/mg6.tgz mg6; ls -la $R

# ---- mg7.sh (mends/) ----
# Two GPUs: the kokkos GPU test as mended.
set -u
R=$OUT; export OUT=/tmp/mg7; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF -DEW_ENABLE_CUDA=OFF -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
cmake --build build-gpu-kokkos -j 30 --target ew_kokkos_tests > $OUT/build.log 2>&1; echo "build rc=$?"; grep -E 'error' $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-kokkos/tests/kokkos/ew_kokkos_tests --gtest_filter='KokkosBackend.*' > $OUT/kokkos-gpu.log 2>&1; echo "kokkos rc=$?"; grep -E '^\[  (     OK|FAILED|SKIPPED|PASSED)|Failure|Which' $OUT/kokkos-gpu.log | head -20
cd /tmp && tar czf $R/mg7.tgz mg7
