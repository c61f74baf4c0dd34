# Sourced by the GPU check scripts of bench/cuda (*_check.sh): where logs go ($out: $OUT,
# default ./out), the exit status they build up ($status), whether the benchmark steps run
# ($bench: the caller turns it off on --no-bench) and the step banner.
out=${OUT:-$PWD/out}
mkdir -p "$out"
bench=1
status=0
step() { echo; echo "=== $* ($(date +%T))"; }
