#!/usr/bin/env bash
# Set-up, build, and the main job on this machine: what the build can run here,
# then the roofline of every usable backend against the measured ceilings.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh "$@"
build=${EW_BUILD_DIR:-build}
"$build/tools/ew-info"
if [ -x "$build/bench/roofline/ew-roofline" ]; then
  "$build/bench/roofline/ew-roofline" --quick --plot roofline.svg --json roofline.json
elif [ -x "$build/bench/gbench/ew-gbench" ]; then
  "$build/bench/gbench/ew-gbench" --benchmark_filter='add' --benchmark_min_time=0.05
fi
