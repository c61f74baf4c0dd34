#!/usr/bin/env bash
# A build whose kernels were not compiled for the GPU at hand, checked on a GPU machine
# without network access: for each architecture list given (default "80": an sm_80-only
# build, which an H100 or H200 runs by compiling its compute_80 PTX), configure
# build-gpu-arch<LIST>, build ew-info and the cuda tests, then ew-info, the cuda backend's
# own tests (Cuda.*, among them Cuda.KernelArchitectureIsTheCodeThatRuns), the shared op
# suite on cuda and the cuda reduction tests: every result bit for bit against scalar
# whatever code the driver runs. A list with no code the GPU can run (100-real on an H100)
# stops after ew-info, which reports the cuda backend unusable with the reason (and the
# automatic choice passing it over). Logs go to $OUT (default ./out), one per list and step.
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/architecture_check.sh [ARCHITECTURES ...]     e.g. 80 90 "80-real;90-real"
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
(( $# )) || set -- 80
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for archs in "$@"; do
  tag=${archs//[^0-9a-z]/_}
  build=build-gpu-arch$tag
  step "configure and build for CMAKE_CUDA_ARCHITECTURES=$archs"
  bash tools/gpu/prepare.sh "$build" -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF -DEW_BUILD_TESTS=ON \
    "-DCMAKE_CUDA_ARCHITECTURES=$archs" > /dev/null || { status=1; continue; }
  cmake --build "$build" -j 16 --target ew-info ew_cuda_tests ew_tests ew_reduce_tests > "$out/arch$tag-build.log" 2>&1 ||
    { tail -40 "$out/arch$tag-build.log"; status=1; continue; }
  "$build"/tools/ew-info | tee "$out/arch$tag-info.log" | grep -E "^  cuda|^expressions on cuda"
  # A list with no code this GPU can run (e.g. 100-real on an H100): cuda unusable, with the reason.
  if grep -q "has no kernel code" "$out/arch$tag-info.log"; then
    grep -q "^automatic choice: cuda" "$out/arch$tag-info.log" && { echo "FAIL: cuda chosen without code for this GPU"; status=1; }
    echo "no code for this GPU: cuda unusable"; continue
  fi
  for t in "tests/cuda/ew_cuda_tests Cuda.*" "tests/ew_tests cuda/*" "tests/reduce/ew_reduce_tests cuda/*"; do
    read -r binary filter <<< "$t"
    step "$binary --gtest_filter=$filter ($archs)"
    log="$out/arch$tag-${binary##*/}.log"
    timeout -k 10 600 "$build/$binary" --gtest_filter="$filter" --gtest_brief=1 > "$log" 2>&1 || status=1
    grep -E "run as compute_|^\[  (PASSED|FAILED|SKIPPED) |tests? ran" "$log" | head -20
  done
done
exit $status
