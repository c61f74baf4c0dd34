#!/usr/bin/env bash
# Several GPUs, checked on a GPU machine without network access, in one go (docs/multigpu.md):
# configure for the GPUs at hand (Open MPI from .deps/ when the system has none), build,
# ctest -L multigpu (must run, not skip: it needs 2 usable GPUs), ctest -L mpi (the CI test),
# ew-cuda-multi-bench (add and triad f32 on 1, 2 and 4 GPUs, 2^28 per device and 2^31 in all,
# ratios to one GPU), then examples/mpi_triad on the GPUs: a small run checked bit for bit
# against one process, and 2^30 elements on 1 rank and on 2 ranks with one GPU each (their
# checksums must agree; the ratio of their rates is printed). Logs go to $OUT (default ./out).
# Usage, from the repository root on a GPU machine (see docs/multigpu.md):
#   bash bench/cuda/multigpu_check.sh [--no-bench] [extra CMake arguments]
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
if [[ ${1:-} == --no-bench ]]; then bench=0; shift; fi

step configure
# Open MPI unpacked from .deps/ into /opt/ewdeps (tools/gpu/prepare.sh) runs from there once
# told where it is, and is preferred when .deps/ has it (a system Open MPI may lack a working PMIx).
# MPI is looked up afresh (-U): a cache from an earlier configure may hold another MPI or none.
mpi_args=(-U 'MPI*')
if compgen -G ".deps/libopenmpi-dev_*.deb" > /dev/null; then
  root=/opt/ewdeps/usr
  export OPAL_PREFIX=$root
  export PMIX_PREFIX=$root/lib/x86_64-linux-gnu/pmix2
  export PMIX_MCA_mca_base_component_path=$PMIX_PREFIX/lib/pmix
  mpi_args+=(-DMPI_CXX_COMPILER=$root/bin/mpicxx.openmpi -DMPIEXEC_EXECUTABLE=$root/bin/mpirun.openmpi)
fi
bash tools/gpu/prepare.sh build-gpu -DEW_ENABLE_KOKKOS=OFF -DEW_ENABLE_HIGHWAY=OFF "${mpi_args[@]}" "$@" || exit 1
export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# Root may launch (containers), and one node needs no ssh to start processes.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm=isolated
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "GPUs: $gpus"
(( gpus >= 2 )) || { echo "FAILED: this check needs 2 GPUs, nvidia-smi lists $gpus"; status=1; }
mpi=0
grep -q "MPI example (examples/mpi_triad): on" build-gpu.configure.log && mpi=1
(( mpi )) || { grep "MPI example" build-gpu.configure.log; echo "FAILED: no MPI (carry Open MPI's .debs in .deps/)"; status=1; }

step build
targets=(ew-info ew_cuda_multigpu_tests)
(( mpi )) && targets+=(mpi_triad)
(( bench )) && targets+=(ew-cuda-multi-bench)
cmake --build build-gpu -j 16 --target "${targets[@]}" > "$out/multigpu-build.log" 2>&1 ||
  { tail -60 "$out/multigpu-build.log"; exit 1; }
build-gpu/tools/ew-info | tee "$out/multigpu-info.log"

step "ctest -L multigpu"
ctest --test-dir build-gpu -L multigpu --output-on-failure --timeout 300 > "$out/multigpu-ctest.log" 2>&1 || status=1
tail -8 "$out/multigpu-ctest.log"
if grep -q "Skipped" "$out/multigpu-ctest.log"; then
  echo "FAILED: multigpu tests were skipped:"; grep -A2 "Skipped" "$out/multigpu-ctest.log" | head -12; status=1
fi

if (( mpi )); then
  step "ctest -L mpi (the CI test: 1-3 ranks on the CPU, bit for bit)"
  ctest --test-dir build-gpu -L mpi --output-on-failure --timeout 300 > "$out/mpi-ctest.log" 2>&1 || status=1
  tail -4 "$out/mpi-ctest.log"

  mpirun=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' build-gpu/CMakeCache.txt)
  triad() {  # ranks, log, arguments...
    local ranks=$1 log=$2; shift 2
    timeout -k 10 300 "$mpirun" --bind-to none -np "$ranks" build-gpu/examples/mpi_triad --backend cuda "$@" \
      > "$out/$log" 2>&1 || { echo "FAILED: mpi_triad on $ranks rank(s) (rc $?)"; status=1; }
    cat "$out/$log"
  }
  step "mpi_triad on 2 ranks, one GPU each, against one process (scalar), bit for bit"
  triad 2 mpi-verify.log --n 10000019 --block 65536 --reps 3 --verify
  grep -q "verify: c is bit-identical" "$out/mpi-verify.log" || status=1

  step "mpi_triad, 2^30 elements: 1 rank, then 2 ranks with one GPU each"
  triad 1 mpi-1rank.log --n $((1 << 30)) --reps 20
  triad 2 mpi-2ranks.log --n $((1 << 30)) --reps 20
  one=$(sed -n 's/.* \([0-9.]*\) GB\/s.*/\1/p' "$out/mpi-1rank.log")
  two=$(sed -n 's/.* \([0-9.]*\) GB\/s.*/\1/p' "$out/mpi-2ranks.log")
  [[ -n $one && -n $two ]] && awk -v a="$one" -v b="$two" 'BEGIN { printf "mpi_triad: 2 ranks / 1 rank = %.3f\n", b / a }' |
    tee "$out/mpi-ratio.log"
  if [[ "$(grep checksum "$out/mpi-1rank.log")" != "$(grep checksum "$out/mpi-2ranks.log")" ]]; then
    echo "FAILED: the checksums of 1 and 2 ranks differ"; status=1
  fi
fi

if (( bench )); then
  step ew-cuda-multi-bench
  build-gpu/bench/cuda/ew-cuda-multi-bench --csv "$out/multigpu-bench.csv" > "$out/multigpu-bench.log" 2>&1 || status=1
  cat "$out/multigpu-bench.log"
fi
exit $status
