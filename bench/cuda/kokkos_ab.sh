#!/usr/bin/env bash
# The kokkos expression walk of several source trees on one GPU machine without network
# access: builds ew-roofline (cuda and kokkos) from each tree NAME=SRC, then runs the same
# ew-roofline expressions, kokkos beside cuda, on each tree in turn, ROUNDS times in rotating
# order (bench/ab_trees.sh; a tree: any checkout of this project, for example `git archive` of
# a commit). Ends with each tree's kokkos/cuda ratios (cuda's time over kokkos's, same run),
# the median over the rounds and every round.
# KOKKOS_ROOT: a CUDA-enabled Kokkos install. Logs: $OUT/<name>-run<k>.txt ($OUT: default ./out).
# Usage, from the repository root:
#   KOKKOS_ROOT=/opt/kokkos-cuda bash bench/cuda/kokkos_ab.sh 3 old=/tmp/old new=. -- --sizes 24,26,28 --warm
set -uo pipefail
source "$(dirname "$0")/check_common.sh"
: "${KOKKOS_ROOT:?a CUDA-enabled Kokkos install}"
rounds=$1
shift
source "$(dirname "$0")/../ab_trees.sh"
ab_trees "$@"
source "$(dirname "$0")/../../tools/gpu/unpack_deps.sh"
ew_unpack_deps "${DEPS:-$PWD/.deps}"
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:$KOKKOS_ROOT/lib64:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)

build_one() {
  local name=$1 src=$2 build=/tmp/kokkos-ab-$1
  rm -rf "$build"
  if ! cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr \
      -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" -DEW_ENABLE_CUDA=ON -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=OFF \
      -DKokkos_ROOT="$KOKKOS_ROOT" -DEW_BUILD_TESTS=OFF -DEW_BUILD_EXAMPLES=OFF > "$out/$name-configure.log" 2>&1; then
    echo "configure of $name failed"; tail -20 "$out/$name-configure.log"; return 1
  fi
  cmake --build "$build" --target ew-roofline -j 8 > "$out/$name-build.log" 2>&1 ||
    { echo "build of $name failed"; tail -20 "$out/$name-build.log"; return 1; }
}
step "build ${names[*]}"
for k in "${!names[@]}"; do build_one "${names[$k]}" "${srcs[$k]}" & done
failed=0
for job in $(jobs -p); do wait "$job" || failed=1; done
[ "$failed" = 0 ] || exit 1

run_one() {
  step "round $2: $1"
  "/tmp/kokkos-ab-$1/bench/roofline/ew-roofline" --only-expressions --backends cuda,kokkos "${args[@]}" \
    > "$out/$1-run$2.txt" 2>&1 || status=1
}
ab_rounds "$rounds" run_one

step "kokkos/cuda, median over the rounds [each round]"
for name in "${names[@]}"; do
  echo "$name"
  for round in $(seq 1 "$rounds"); do
    sed -n '/^kokkos on the GPU against cuda/,/^$/p' "$out/$name-run$round.txt" | grep -E '^  '
  done |
    awk '{key = $1 " " $2 " " $3 " " $4; v[key] = v[key] " " $5; if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
      END { for (i = 1; i <= n; i++) { key = order[i]; m = split(v[key], a, " ");
              for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
              med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
              printf "  %-28s %.3f [%s ]\n", key, med, v[key] } }'
done
exit $status
