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
  local _ab_rounds=$1 _ab_run=$2 _ab_round _ab_i _ab_count=${#names[@]}
  for _ab_round in $(seq 1 "$_ab_rounds"); do
    for _ab_i in "${!names[@]}"; do
      "$_ab_run" "${names[$(( (_ab_i + _ab_round - 1) % _ab_count ))]}" "$_ab_round"
    done
  done
}
