# Sourced by the GPU check scripts of bench/cuda (*_check.sh): where logs go ($out: $OUT,
# default ./out), the exit status they build up ($status), whether the benchmark steps run
# ($bench: the caller turns it off on --no-bench), the step banner, `sanitize` and `sanitized`.
out=${OUT:-$PWD/out}
mkdir -p "$out"
bench=1
status=0
step() { echo; echo "=== $* ($(date +%T))"; }

# sanitize TOOL BINARY FILTER: one compute-sanitizer run of a test binary on a gtest filter,
# at most 10 minutes; prints "FAILED: ..." (which the callers grep for) when it fails.
sanitize() {
  timeout -k 10 600 compute-sanitizer --tool "$1" --error-exitcode 7 "$2" --gtest_filter="$3" --gtest_brief=1 ||
    { rc=$?; echo "FAILED: ${2##*/} under $1 (rc $rc)"; }
}

# sanitized LOG: the summary lines of a log of sanitize runs; a failed run sets status=1.
sanitized() {
  grep -E "SUMMARY|FAILED|PASSED|tests ran" "$1"
  if grep -q FAILED "$1"; then status=1; fi
}
