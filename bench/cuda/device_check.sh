#!/usr/bin/env bash
# Everything the cuda backend needs checked on a GPU machine, in one go: configure
# for the GPU at hand, build, the GPU tests, compute-sanitizer memcheck, racecheck,
# initcheck and synccheck on a filtered run, then ew-cuda-bench. Logs go to $OUT
# (default ./out).
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/device_check.sh [--no-bench] [extra CMake arguments]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
if [[ ${1:-} == --no-bench ]]; then bench=0; shift; fi

step configure
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF "$@" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

step build
# Every executable with tests labelled gpu: a test discovered after the build is missing from
# ctest -L gpu, not failed, where its executable is not built; one registered at configure time
# (add_test, gtest_add_tests: CudaFailedLaunch, the multigpu ones) counts as failed.
targets=(ew-info ew_tests ew_cuda_tests ew_cuda_fault_tests ew_cuda_one_runtime_tests ew_cuda_failed_launch_tests
         ew_cuda_multigpu_tests ew_expr_tests ew_cuda_expr_tests ew_reduce_tests ew_float16_tests ew_fuzz)
(( bench )) && targets+=(ew-cuda-bench)
cmake --build build-gpu -j 16 --target "${targets[@]}" > "$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
grep -i "warning" "$out/build.log" | grep -v "^nvcc warning : Support for offline compilation" | head -20
build-gpu/tools/ew-info | tee "$out/info.log"

step "ctest -L gpu"
ctest --test-dir build-gpu -L gpu --output-on-failure -j 8 --timeout 300 > "$out/ctest.log" 2>&1 || status=1
tail -15 "$out/ctest.log"

step "ew_fuzz (every usable backend, cuda included), 120 s"
build-gpu/tests/fuzz/ew_fuzz --seconds 120 > "$out/fuzz.log" 2>&1 || status=1
tail -4 "$out/fuzz.log"

# API errors the tests provoke on purpose (out of memory, bad device, the kernel fault
# of CudaSticky's child process) would count as sanitizer findings: those tests stay
# out of the filtered runs. The fault-injection tests (ew_cuda_fault_tests) stay in:
# their failures never reach CUDA. Each run is bounded.
cuda_filter='Cuda.Pipeline*:Cuda.Managed*:Cuda.Borrowed*:Cuda.CallerAllocated*:Cuda.SteadyState*:CudaThreads.*'
shared_filter='cuda/Ops.*_n17_*:cuda/Ops.*_n1000_*:cuda/Ops.*_n1048579_off2:cuda/Aliasing.*:cuda/SpecialValues.*'
for tool in memcheck racecheck initcheck synccheck; do
  step "compute-sanitizer --tool $tool"
  {
    sanitize $tool build-gpu/tests/cuda/ew_cuda_tests "$cuda_filter"
    sanitize $tool build-gpu/tests/ew_tests "$shared_filter"
    sanitize $tool build-gpu/tests/cuda/ew_cuda_fault_tests 'CudaFaults.*'
  } > "$out/$tool.log" 2>&1
  sanitized "$out/$tool.log"
done

if (( bench )); then
  step ew-cuda-bench
  build-gpu/bench/cuda/ew-cuda-bench --csv "$out/bench.csv" > "$out/bench.log" 2>&1 || status=1
  cat "$out/bench.log"
fi
exit $status
