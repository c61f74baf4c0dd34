#!/usr/bin/env bash
# Compares CPU builds of several source trees on one machine: builds ew-roofline (or AB_PROGRAM) from each
# (CUDA and Kokkos off, the trees side by side), then runs the same ew-roofline arguments on
# each tree in turn, ROUNDS times interleaved in rotating order, so that the machine's drift falls on every
# tree alike. A tree is any checkout of this project, for example `git archive` of a
# commit next to the working tree. Logs: OUTDIR/<name>-run<k>.txt, OUTDIR/machine.txt.
# Usage: bench/cpu/ab_compare.sh OUTDIR ROUNDS NAME=SRC [NAME=SRC ...] -- EW-ROOFLINE ARGS
# AB_PROGRAM picks another program of the build (its path in the build directory, e.g.
# AB_PROGRAM=bench/cpu/ew-reduce-bench); the arguments after -- are then its own.
# Debian packages the machine lacks may lie in $DEPS/*.deb (default ./.deps): they are
# unpacked into /opt/ewdeps, never into /.
set -uo pipefail
out=$1 rounds=$2
shift 2
source "$(dirname "$0")/../ab_trees.sh"
ab_trees "$@"
program=${AB_PROGRAM:-bench/roofline/ew-roofline}
mkdir -p "$out"

source "$(dirname "$0")/../../tools/gpu/unpack_deps.sh"
ew_unpack_deps "${DEPS:-$PWD/.deps}"
{ date -u; lscpu; uptime; } > "$out/machine.txt" 2>&1

build_one() {
  local name=$1 src=$2 build=/tmp/ab-build-$1
  rm -rf "$build"  # a fresh build: an earlier run may have used this name for another tree
  if ! cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEW_ENABLE_CUDA=OFF -DEW_ENABLE_KOKKOS=OFF \
      -DEW_BUILD_TESTS=OFF -DEW_BUILD_EXAMPLES=OFF -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr > "$out/$name-configure.log" 2>&1; then
    echo "configure of $name failed"; tail -20 "$out/$name-configure.log"; return 1
  fi
  cmake --build "$build" --target "${program##*/}" -j "$(nproc)" > "$out/$name-build.log" 2>&1 ||
    { echo "build of $name failed"; tail -20 "$out/$name-build.log"; return 1; }
}
for k in "${!names[@]}"; do build_one "${names[$k]}" "${srcs[$k]}" & done
failed=0
for job in $(jobs -p); do wait "$job" || failed=1; done
[ "$failed" = 0 ] || exit 1
echo "== built ($(date +%T))"

run_one() {
  echo "== round $2: $1 ($(date +%T))"
  "/tmp/ab-build-$1/$program" "${args[@]}" > "$out/$1-run$2.txt" 2>&1
}
ab_rounds "$rounds" run_one
