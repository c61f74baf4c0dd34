#!/usr/bin/env bash
# Set-up, build, and the whole test suite on every backend this machine can run.
# GPU cases (ctest label gpu) skip with their reason where no GPU is usable.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh "$@"
ctest --test-dir "${EW_BUILD_DIR:-build}" -j "$(nproc)" --output-on-failure
