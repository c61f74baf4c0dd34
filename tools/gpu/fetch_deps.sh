#!/usr/bin/env bash
# For a GPU machine without network access: downloads, on a machine where Debian's
# archive is reachable, the Debian packages that a bare GPU machine lacks to build the
# project and its tests into .deps/ (git-ignored). Copy the repository with its .deps/
# folder to the GPU machine and run tools/gpu/prepare.sh there to unpack them.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .deps && cd .deps
apt-get download libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian libhwy-dev libhwy1
# Open MPI for examples/mpi_triad and bench/cuda/multigpu_check.sh (unpacked, not installed:
# the check script points Open MPI and PMIx at /opt/ewdeps). Runtime libraries only: the
# -dev packages that libopenmpi-dev depends on are not needed to build against mpi.h.
apt-get download libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common libhwloc15 libevent-core-2.1-7 \
  libevent-pthreads-2.1-7 libpmix2 libmunge2 libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1 \
  libnl-3-200 libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libnuma1 libatomic1
