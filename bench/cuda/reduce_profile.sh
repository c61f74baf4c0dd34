#!/usr/bin/env bash
# Where the staged reduction kernel's time goes, on a GPU machine without network access:
# Nsight Compute (ncu, clocks left alone) on single launches of the library's staged kernel
# (units of 8 plan blocks and its default units) and of the bench-only staged kernel that
# reads the same order ("atomic, staged plan order", bench/cuda/reduce_peers.cu), f32 sum at
# 2^24 and 2^28: duration, DRAM throughput, warp states, and the stall samples of every SASS
# line (CSV). The launches are counted in ew-cuda-reduce-bench --only sum,f32 --reps 1: each of
# its rows is 3 warm-up calls and a batch of 20, in the order default, plain launches,
# register kernel, staged 2 slots (the default units), staged 3 slots, units of 8, units of 32,
# then the peers; the skips below assume the f32 sum's default at 2^24 is the staged kernel
# and at 2^28 the register kernel (reduce.cu's default_reduce_tuning; no staged launch in
# the first three rows there). Reports and CSV files go to $OUT (default ./out). About 2
# minutes on an H200 (77 s on 2026-11-27).
# Usage, from the repository root on a GPU machine (see docs/gpu.md):
#   bash bench/cuda/reduce_profile.sh [extra CMake arguments]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"

step configure
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_BUILD_TESTS=OFF "$@" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
step build
cmake --build build-gpu -j 16 --target ew-cuda-reduce-bench > "$out/profile-build.log" 2>&1 ||
  { tail -60 "$out/profile-build.log"; exit 1; }
bench_bin=build-gpu/bench/cuda/ew-cuda-reduce-bench

# profile NAME KERNEL_REGEX SKIP SIZE: one launch, skipping SKIP launches of kernels matching.
profile() {
  local name=$1 kernel=$2 skip=$3 size=$4
  step "ncu: $name (sum f32 2^$size)"
  ncu --clock-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section SourceCounters \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,smsp__inst_executed.sum -f -o "$out/$name" \
    "$bench_bin" --device-result --only sum,f32 --sizes "$size..$size" --reps 1 > "$out/$name-run.log" 2>&1 || status=1
  ncu -i "$out/$name.ncu-rep" --page details > "$out/$name-details.txt" 2>&1 || status=1
  ncu -i "$out/$name.ncu-rep" --page source --print-source sass --csv > "$out/$name-sass.csv" 2>&1 || status=1
  grep -E "Duration|DRAM Throughput|Memory Throughput|Warp Cycles Per Issued|Issued Warp Per|No Eligible|Registers Per|Dynamic Shared|Grid Size" \
    "$out/$name-details.txt" | head -14
  rm -f "$out/$name.ncu-rep"
}

profile lib-units8-28 staged_kernel 49 28
profile lib-default-28 staged_kernel 3 28
profile bench-staged-28 atomic_staged 3 28
profile lib-default-24 staged_kernel 3 24
profile bench-staged-24 atomic_staged 3 24

step "the same runs timed without the profiler (sum f32, 2^24..2^28)"
"$bench_bin" --device-result --only sum,f32 --sizes 24..28 --reps 15 --csv "$out/profile-timing.csv" > "$out/profile-timing.log" 2>&1 || status=1
grep -E "staged|register|atomic \(not" "$out/profile-timing.log"
cd "$out" && tar -czf profile.tgz ./*-sass.csv ./*-details.txt ./*-run.log && rm -f ./*-sass.csv ./*-details.txt ./*-run.log ||
  status=1
exit $status
