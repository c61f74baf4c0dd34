#!/usr/bin/env bash
# the kokkos check of the working tree, then an A/B of silu against a76b22f (.snap-aa: an
# untracked copy, `git archive a76b22f`) at 2^20..2^28
set -u
R=$OUT; export OUT=/tmp/check; mkdir -p $OUT
mkdir -p /tmp/kk && ln -sfn $PWD/.kokkos-cuda /tmp/kk/install
export KOKKOS_ROOT=/tmp/kk/install
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
time PROFILE_SILU=1 bash bench/cuda/kokkos_expr_check.sh > $OUT/console.log 2>&1; echo "check rc=$?"
grep -E "tests passed|tests failed|ERROR SUMMARY|RACECHECK SUMMARY|WalksOnTheGpu|TwoContexts" $OUT/*.log | head -20
sed -n '/^kokkos on the GPU against cuda/,/^$/p' $OUT/kokkos-expr-roofline.txt
mkdir -p /tmp/ab; OUT=/tmp/ab bash bench/cuda/kokkos_ab.sh 3 before=.snap-aa now=. -- --expressions silu --sizes 20,22,24,26,28 --warm > /tmp/ab/ab.log 2>&1; echo "ab rc=$?"
sed -n '/median over the rounds/,$p' /tmp/ab/ab.log
cd /tmp && tar czf $R/verify.tgz check ab; ls -la $R
