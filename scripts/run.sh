#!/usr/bin/env bash
# Set-up, build, and the main job on this machine: what the build can run here, then
# the roofline of every usable backend against the measured ceilings and the peers
# (table on stdout, JSON and SVG picture in the build folder).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh "$@"
build=${EW_BUILD_DIR:-build}
"$build/tools/ew-info"
echo
"$build/bench/roofline/ew-roofline" --quick --json "$build/roofline.json" --plot "$build/roofline.svg"
echo "picture: $build/roofline.svg, data: $build/roofline.json"
