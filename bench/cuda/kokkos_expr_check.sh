#!/usr/bin/env bash
# The kokkos expression walk on a GPU machine without network access, in one go: the
# kokkos build's tests on the GPU (expr_check.sh --kokkos-only --no-bench: tests/expr's
# kokkos/* cases bit for bit against scalar, the walk's own tests, memcheck), then
# ew-roofline's expressions with kokkos beside cuda (same run, warm, 2^20..2^28) and an
# ncu profile of the walk on clamp f32 at 2^26 (instructions, occupancy, DRAM throughput).
# KOKKOS_ROOT: a CUDA-enabled Kokkos install (shared libraries). Logs go to $OUT.
# PROFILE_SOURCE=1 also writes the executed instructions per SASS line of the walk on clamp
# and silu (ncu source counters, CSV). PROFILE_SILU=1 profiles silu f32 and f64 at 2^26 on
# both backends (cuda's generated kernel, the walk): time, DRAM and SM throughput, issue
# slots, the pipes' utilization, instructions, occupancy, the warps' stall reasons (cycles a
# reason held a warp, per instruction issued: the log's stalled_* lines).
# Usage, from the repository root: KOKKOS_ROOT=/opt/kokkos-cuda bash bench/cuda/kokkos_expr_check.sh [--bench-only]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
: "${KOKKOS_ROOT:?a CUDA-enabled Kokkos install}"
if [[ ${1:-} == --bench-only ]]; then  # no tests: configure, then the benchmark and profiles
  bash tools/gpu/prepare.sh build-gpu-kokkos -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF \
    -DKokkos_ROOT="$KOKKOS_ROOT" || exit 1
else
  OUT=$out bash "$(dirname "$0")/expr_check.sh" --kokkos-only --no-bench > "$out/kokkos-check.log" 2>&1 || status=1
  tail -25 "$out/kokkos-check.log"
fi
step "build ew-roofline (kokkos)"
cmake --build build-gpu-kokkos -j 16 --target ew-roofline > "$out/kokkos-roofline-build.log" 2>&1 ||
  { tail -30 "$out/kokkos-roofline-build.log"; exit 1; }
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
step "ew-roofline: expressions, kokkos beside cuda"
build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends cuda,kokkos --sizes 20,24,26,28 --warm \
  --json "$out/kokkos-expr-roofline.json" > "$out/kokkos-expr-roofline.txt" 2>&1 || status=1
sed -n '/^expr /,$p' "$out/kokkos-expr-roofline.txt"
step "ncu: the walk on clamp f32 2^26"
ncu --clock-control none --kernel-name-base mangled -k regex:LaneExpr --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy \
  --section LaunchStats --metrics smsp__inst_executed.sum \
  build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends kokkos --expressions clamp \
  --dtypes f32 --sizes 26 --warm --reps 1 --no-peers > "$out/kokkos-clamp-ncu.log" 2>&1 || status=1
grep -E "inst_executed|Registers Per|Achieved Occupancy|DRAM Throughput|Duration|Compute \(SM\) Thr" "$out/kokkos-clamp-ncu.log"
if [[ ${PROFILE_SOURCE:-0} == 1 ]]; then
  # Executed instructions per SASS line of the walk, for clamp and silu (f32, 2^24).
  for e in clamp silu; do
    step "ncu source counters: $e"
    ncu --clock-control none --kernel-name-base mangled -k regex:"(Lane|Tile)Expr" --launch-skip 3 --launch-count 1 \
      --section SourceCounters --metrics smsp__inst_executed.sum -f -o "$out/kokkos-$e" \
      build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends kokkos --expressions $e \
      --dtypes f32 --sizes 24 --warm --reps 1 --no-peers > "$out/kokkos-$e-ncu-run.log" 2>&1 || status=1
    ncu -i "$out/kokkos-$e.ncu-rep" --page source --print-source sass --csv > "$out/kokkos-$e-sass.csv" 2>&1 || status=1
    head -c 300 "$out/kokkos-$e-sass.csv"; echo
    rm -f "$out/kokkos-$e.ncu-rep"
  done
fi
if [[ ${PROFILE_SILU:-0} == 1 ]]; then
  for dtype in f32 f64; do
    for backend in cuda kokkos; do
      step "ncu: silu $dtype 2^26 on $backend"
      kernel=ew_expr
      [[ $backend == kokkos ]] && kernel="(Lane|Tile)Expr"
      ncu --clock-control none --kernel-name-base mangled -k regex:$kernel --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats \
        --section SchedulerStats --section WarpStateStats \
        --metrics 'smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
        build-gpu-kokkos/bench/roofline/ew-roofline --only-expressions --backends $backend --expressions silu \
        --dtypes $dtype --sizes 26 --warm --reps 1 --no-peers > "$out/silu-$dtype-$backend-ncu.log" 2>&1 || status=1
      grep -E "inst_executed|Registers Per|Achieved Occupancy|DRAM Throughput|Duration|Compute \(SM\) Thr|Issue Slots Busy|Executed Ipc A|Pipe|No Eligible|Cycles Per Issued|stalled_" \
        "$out/silu-$dtype-$backend-ncu.log"
    done
  done
fi
exit $status
