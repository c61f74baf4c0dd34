#!/usr/bin/env bash
# the kokkos check (tests on the GPU, sanitizers, bench, silu profile) of the working tree
set -u
R=$OUT; export OUT=/tmp/check; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
time PROFILE_SILU=1 bash bench/cuda/kokkos_expr_check.sh > $OUT/console.log 2>&1; echo "check rc=$?"
tail -60 $OUT/console.log | grep -v "^    smsp__average" | head -60
grep -E "tests passed|tests failed|Failed|ERROR SUMMARY|RACECHECK SUMMARY|WalksOnTheGpu|TwoContexts" $OUT/*.log | head -30
cd /tmp && tar czf $R/check.tgz check; ls -la $R
