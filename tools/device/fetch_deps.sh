#!/usr/bin/env bash
# Downloads (here, where Debian's archive is reachable) the Debian packages that a
# bare GPU machine lacks to build the project and its tests: they travel in .deps/
# (git-ignored) with the `device` tool's `carry`, and prepare.sh unpacks them there.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .deps && cd .deps
apt-get download libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian libhwy-dev libhwy1
