#pragma once
// How the cuda backend launches an expression's elementwise kernel (expr.cpp), in plain C++
// so that benchmarks compiled without the backend's headers use the one declaration.
#include <cstddef>

namespace ew::detail::cuda {

// None of it changes the bits (every element is computed by the same element function);
// it decides which of the generated kernels runs and how much each block asks for at once.
struct ExprLaunchTuning {
  int bulk = 0;  // 0: the bulk-copy kernel from kExprBulkMinGroups groups on (sm_90+, aligned
                 // operands); 1: always where it exists; -1: never (the vector kernel)
  std::size_t bulk_bytes_in_flight_per_sm = 0;  // the bulk tile rule's target; 0: the default
                                                // (default_bulk_bytes_in_flight, bulk_tiles.hpp)
};

// Benchmarks and tests (not public API): every later launch uses `tuning` (all zero restores
// the defaults). Throws ew::Error(invalid_argument) for a `bulk` outside -1..1 or a target
// above 228 KiB (an SM's shared memory).
void set_expr_launch_tuning(const ExprLaunchTuning& tuning);

}  // namespace ew::detail::cuda
