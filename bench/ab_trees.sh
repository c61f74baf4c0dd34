# Sourced by the scripts that compare source trees on one machine (bench/cpu/ab_compare.sh,
# bench/cuda/kokkos_ab.sh). ab_trees NAME=SRC ... -- ARGS: the trees' names and absolute paths
# (`names`, `srcs`) and what follows `--` (`args`). ab_rounds ROUNDS RUN: calls `RUN NAME ROUND`
# for every tree, ROUNDS times, each round starting with the next tree, so that no tree always
# runs first and the machine's drift falls on every tree alike.
ab_trees() {
  names=() srcs=() args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    names+=("${1%%=*}") srcs+=("$(cd "${1#*=}" && pwd)")
    shift
  done
  [ $# -gt 0 ] && shift  # --
  args=("$@")
}

ab_rounds() {
  local rounds=$1 run=$2 round i count=${#names[@]}
  for round in $(seq 1 "$rounds"); do
    for i in "${!names[@]}"; do
      "$run" "${names[$(( (i + round - 1) % count ))]}" "$round"
    done
  done
}
