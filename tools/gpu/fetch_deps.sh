#!/usr/bin/env bash
# For a GPU machine without network access: downloads, on a machine where Debian's
# archive is reachable, the Debian packages that a bare GPU machine lacks to build the
# project and its tests into .deps/ (git-ignored). Copy the repository with its .deps/
# folder to the GPU machine and run tools/gpu/prepare.sh there to unpack them.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .deps && cd .deps
apt-get download libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian libhwy-dev libhwy1
