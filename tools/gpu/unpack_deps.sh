# Sourced by tools/gpu/prepare.sh, bench/cpu/host_check.sh and bench/cpu/ab_compare.sh:
# unpacks the Debian packages in folder $1 (tools/gpu/fetch_deps.sh fills .deps/) into
# /opt/ewdeps, never into /, and puts their libraries on LD_LIBRARY_PATH. No packages
# there: nothing to do (scripts/setup.sh installed them).
ew_unpack_deps() {
  if compgen -G "$1/*.deb" > /dev/null; then
    mkdir -p /opt/ewdeps
    local f
    for f in "$1"/*.deb; do dpkg -x "$f" /opt/ewdeps; done
    export LD_LIBRARY_PATH=/opt/ewdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  fi
}
