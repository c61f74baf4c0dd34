# One H200, the head's whole GPU test suite, part 1: configure cuda + kokkos-on-CUDA + highway
# and build every test target (s3b.sh runs them on the machine this leaves warm).
set -u
R=$OUT; export OUT=/tmp/s3; mkdir -p $OUT
ln -sfn $PWD/build-kokkos-cuda /tmp/kokkos-cuda
export KOKKOS_ROOT=/tmp/kokkos-cuda
bash tools/gpu/prepare.sh build-gpu-all -DEW_ENABLE_KOKKOS=ON -DEW_ENABLE_HIGHWAY=ON -DKokkos_ROOT=$KOKKOS_ROOT > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
grep -A6 "backends:" build-gpu-all.configure.log
( time cmake --build build-gpu-all -j 16 ) > $OUT/build.log 2>&1; echo "build rc=$?"; tail -4 $OUT/build.log
grep -E " error|error:" $OUT/build.log | head
export LD_LIBRARY_PATH=$KOKKOS_ROOT/lib:/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build-gpu-all/tools/ew-info > $OUT/ew-info.txt 2>&1; cat $OUT/ew-info.txt | head -30
cd /tmp && tar czf $R/s3.tgz s3
