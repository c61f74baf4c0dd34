# One H200, the head's whole GPU test suite, part 2 (after s3a.sh): ctest's gpu label (the cuda
# backend's cases of every suite) and its kokkos label (kokkos on the GPU), each test its own
# process, 16 at once.
set -u
R=$OUT; export OUT=/tmp/s3b; mkdir -p $OUT
export KOKKOS_ROOT=/tmp/kokkos-cuda
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
( time timeout 330 ctest --test-dir build-gpu-all -L gpu -j 16 --timeout 300 --output-on-failure ) > $OUT/ctest-gpu.log 2>&1; echo "ctest gpu rc=$?"; tail -12 $OUT/ctest-gpu.log
( time timeout 200 ctest --test-dir build-gpu-all -L kokkos -j 16 --timeout 150 --output-on-failure ) > $OUT/ctest-kokkos.log 2>&1; echo "ctest kokkos rc=$?"; tail -12 $OUT/ctest-kokkos.log
cd /tmp && tar czf $R/s3b.tgz s3b
