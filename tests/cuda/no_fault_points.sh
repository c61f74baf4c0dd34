#!/bin/sh
# Usage: no_fault_points.sh NM TEST_LIBRARY LIBRARY
# The fault points (backends/cuda/fault_injection.hpp) must be in the test-only
# library and nowhere in the library users get. Finding them in the test-only library
# first keeps the symbol pattern from going stale.
nm=$1 test_library=$2 library=$3
if ! "$nm" -C "$test_library" | grep -q 'cuda::fault::next'; then
  echo "no fault points found in $test_library: the pattern of this test is stale"
  exit 1
fi
symbols=$("$nm" -C "$library" 2>&1) || { echo "cannot read $library: $symbols"; exit 1; }
dynamic=$("$nm" -C -D "$library" 2>&1) || { echo "cannot read $library: $dynamic"; exit 1; }
if printf '%s\n%s\n' "$symbols" "$dynamic" | grep 'cuda::fault::'; then
  echo "fault points in $library"
  exit 1
fi
echo "no fault points in $library ($(printf '%s\n' "$dynamic" | grep -c 'ew::') ew symbols)"
