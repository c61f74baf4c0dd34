#!/bin/sh
# Usage: private_runtime.sh NM LIBRARY
# The library's CUDA runtime is its own: linked in statically, with none of its symbols in
# the library's dynamic table, neither exported (an application's calls could bind to it)
# nor imported (the library's calls could bind to the application's runtime). So the
# application's runtime state, its last error among it, is never the library's
# (docs/gpu.md). Finding the runtime in the library first keeps the pattern from going stale.
nm=$1 library=$2
symbols=$("$nm" "$library" 2>&1) || { echo "cannot read $library: $symbols"; exit 1; }
if ! printf '%s\n' "$symbols" | grep -q ' [tT] cudaGetLastError$'; then
  echo "no CUDA runtime linked into $library: the pattern of this test is stale"
  exit 1
fi
dynamic=$("$nm" -D "$library" 2>&1) || { echo "cannot read $library: $dynamic"; exit 1; }
if printf '%s\n' "$dynamic" | grep -E ' (cuda[A-Z]|__cuda)[A-Za-z_0-9]*$'; then
  echo "CUDA runtime symbols in the dynamic table of $library"
  exit 1
fi
echo "the CUDA runtime in $library is its own ($(printf '%s\n' "$symbols" | grep -c ' [tT] cuda[A-Z]') runtime functions, none in its dynamic table)"
