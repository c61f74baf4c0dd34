#!/usr/bin/env bash
# The CPU check of a many-core machine (docs/performance/cpu.md): what the machine is
# (lscpu, NUMA nodes), the CPU backends' tests, whether first touch decides the speed, and
# ew-roofline over the CPU backends with the CPU peers, the OpenMP peer under its default
# settings and under tuned OpenMP settings. Builds without CUDA. Everything lands in OUTDIR.
# Usage: bench/cpu/host_check.sh [SOURCE_DIR=.] [BUILD_DIR=build-cpu] [OUTDIR=cpu-check] [STAGE=all]
#   STAGE: all | facts | tests | roofline (highway and peers) | omp (the same, the OpenMP peer
#          under tuned OpenMP settings) | kokkos (kokkos and scalar) | expressions (the fixed
#          set of docs/expressions.md fused, unfused and against an OpenMP loop)
# Debian packages the machine lacks (libhwy-dev, libtrilinos-kokkos-dev, gtest) may lie in
# $DEPS/*.deb (default SOURCE_DIR/.deps): they are unpacked into /opt/ewdeps, never into /.
set -uo pipefail
src=$(cd "${1:-.}" && pwd)
build=${2:-build-cpu}
out=${3:-cpu-check}
stage=${4:-all}
mkdir -p "$out"
log() { echo "== $*" | tee -a "$out/host_check.log"; }

source "$src/tools/gpu/unpack_deps.sh"
ew_unpack_deps "${DEPS:-$src/.deps}"

log "configure and build ($(nproc) CPUs)"
start=$(date +%s)
# Kokkos' CMake package names an include directory that does not exist; cmake/EwKokkos.cmake
# mends it from /usr/include/trilinos, which an unpacked package has elsewhere.
kokkos_include=()
[ -d /opt/ewdeps/usr/include/trilinos ] && kokkos_include=(-D_ew_kokkos_inc=/opt/ewdeps/usr/include/trilinos)
configure() {
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEW_ENABLE_CUDA=OFF \
    -DCMAKE_PREFIX_PATH=/opt/ewdeps/usr "${kokkos_include[@]}" "$@" > "$out/configure.log" 2>&1
}
configure || { log "configure failed, again without Kokkos"; configure -DEW_ENABLE_KOKKOS=OFF; } ||
  { tail -30 "$out/configure.log"; exit 1; }
grep -E "HIGHWAY|KOKKOS|tests:" "$out/configure.log" | tee -a "$out/host_check.log"
targets="ew-roofline ew-first-touch"
[ -d "$build/tests" ] && targets="$targets ew_tests ew_highway_tests ew_expr_tests ew_threads_tests"
cmake --build "$build" --target $targets -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
log "built in $(( $(date +%s) - start )) s"

if [ "$stage" = all ] || [ "$stage" = facts ]; then
  log "machine"
  { date -u; uname -r; lscpu; echo; echo "NUMA nodes:"; for d in /sys/devices/system/node/node*; do
      [ -e "$d/cpulist" ] && echo "$(basename "$d"): cpus $(cat "$d/cpulist")"; done
    command -v numactl > /dev/null && numactl --hardware; uptime; } > "$out/machine.txt" 2>&1
  grep -E "Model name|^CPU\(s\)|Thread|NUMA|L3|L2|Flags" "$out/machine.txt" | cut -c1-160 | tee -a "$out/host_check.log"
  log "first touch"
  "$build/bench/cpu/ew-first-touch" 26 15 2>&1 | tee "$out/first_touch.txt" | tee -a "$out/host_check.log"
fi

if [ "$stage" = all ] || [ "$stage" = tests ]; then
  if [ -x "$build/tests/highway/ew_highway_tests" ]; then
    log "tests"
    "$build/tests/highway/ew_highway_tests" 2>&1 | tail -3 | tee -a "$out/host_check.log"
    "$build/tests/ew_tests" --gtest_filter='highway/*:kokkos/*:scalar/*' 2>&1 | tail -3 | tee -a "$out/host_check.log"
    "$build/tests/expr/ew_expr_tests" --gtest_filter='-cuda/*' 2>&1 | tail -3 | tee -a "$out/host_check.log"
    "$build/tests/threads/ew_threads_tests" 2>&1 | tail -3 | tee -a "$out/host_check.log"
  fi
fi

roofline=$build/bench/roofline/ew-roofline
unsteady() { grep 'points unsteady' "$1" || tail -3 "$1"; }
if [ "$stage" = all ] || [ "$stage" = roofline ]; then
  log "roofline: highway and the CPU peers, default OpenMP settings"
  start=$(date +%s)
  "$roofline" --backends highway --json "$out/roofline-highway.json" --plot "$out/roofline-highway.svg" \
    > "$out/roofline-highway.txt" 2>&1
  log "$(( $(date +%s) - start )) s; $(unsteady "$out/roofline-highway.txt")"
fi

if [ "$stage" = all ] || [ "$stage" = omp ]; then
  # The OpenMP peer under the settings that could help a static OpenMP loop: threads that
  # sleep at once (a preempted thread can move to the core they leave), and threads bound
  # one per core. The library's team does not use OpenMP, so these change only the peer.
  for setting in "OMP_WAIT_POLICY=passive" "OMP_PROC_BIND=close OMP_PLACES=cores"; do
    name=$(echo "$setting" | tr ' =' '_-' | tr 'A-Z' 'a-z')
    log "roofline: highway and the CPU peers, $setting"
    start=$(date +%s)
    env $setting "$roofline" --backends highway --cold --dtypes f32 --sizes 10:26 \
      --json "$out/roofline-$name.json" > "$out/roofline-$name.txt" 2>&1
    log "$(( $(date +%s) - start )) s; $(unsteady "$out/roofline-$name.txt")"
  done
fi

if [ "$stage" = all ] || [ "$stage" = kokkos ]; then
  log "roofline: kokkos and scalar (one thread each), cold"
  start=$(date +%s)
  "$roofline" --backends kokkos,scalar --no-peers --cold --sizes 12:26:2 --reps 5 \
    --json "$out/roofline-kokkos-scalar.json" > "$out/roofline-kokkos-scalar.txt" 2>&1
  log "$(( $(date +%s) - start )) s; $(unsteady "$out/roofline-kokkos-scalar.txt")"
fi
if [ "$stage" = all ] || [ "$stage" = expressions ]; then
  # Kokkos here is Debian's Serial build: one thread pays seconds a call at 2^26, so it
  # gets the smaller sizes in a run of its own.
  log "roofline: expressions on highway, 2^22..2^26"
  start=$(date +%s)
  "$roofline" --only-expressions --backends highway --sizes 22:26 \
    --json "$out/roofline-expressions.json" --plot "$out/roofline-expressions.svg" \
    > "$out/roofline-expressions.txt" 2>&1
  log "$(( $(date +%s) - start )) s; $(unsteady "$out/roofline-expressions.txt")"
  log "roofline: expressions on kokkos, 2^22..2^23"
  start=$(date +%s)
  "$roofline" --only-expressions --backends kokkos --sizes 22:23 \
    --json "$out/roofline-expressions-kokkos.json" > "$out/roofline-expressions-kokkos.txt" 2>&1
  log "$(( $(date +%s) - start )) s; $(unsteady "$out/roofline-expressions-kokkos.txt")"
fi
log "done"
