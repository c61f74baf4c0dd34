#!/usr/bin/env bash
# usage: variants.sh ROUNDS "NCU_TREES" NAME=TREE...   (A/B of kokkos walks, then ncu of silu 2^26)
set -u
R=$OUT; export OUT=/tmp/about; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
rounds=$1 ncut=$2; shift 2
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > $OUT/gpu.txt
echo "no forcing"
time bash bench/cuda/kokkos_ab.sh $rounds "$@" -- --expressions silu --sizes 24,26,28 --warm > $OUT/ab.log 2>&1; echo "ab rc=$?"
sed -n '/median over the rounds/,$p' $OUT/ab.log
for t in $ncut; do for d in f32 f64; do
  LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} \
  ncu --clock-control none --kernel-name-base mangled -k regex:"TileExpr" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
    --metrics 'smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    /tmp/kokkos-ab-$t/bench/roofline/ew-roofline --only-expressions --backends kokkos --expressions silu \
    --dtypes $d --sizes 26 --warm --reps 1 --no-peers > $OUT/ncu-$t-$d.log 2>&1
  echo "== ncu $t $d"
  grep -E "inst_executed.sum|Registers Per|Block Limit (Reg|Shared)|Achieved Active Warps|Duration|No Eligible|stalled_(long_scoreboard|short_scoreboard|wait|math|not_selected|no_instruction|branch)" $OUT/ncu-$t-$d.log | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//; s/ +/ /g'
done; done
cd /tmp && tar czf $R/variants.tgz about; ls -la $R
