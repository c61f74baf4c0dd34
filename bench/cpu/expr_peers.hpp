#pragma once
// Expression peers: the OpenMP loop a user would write for each expression of
// ew-roofline's expressions section (bench/roofline/expressions.cpp), compiled like the
// other CPU peers with -O3 -march=native. The exp of x * sigmoid(x) calls libm.
#include <cstddef>
#include <string>

#include "ew/types.hpp"  // DType, and ew::half / ew::bfloat16 for the 16-bit loops

namespace ew::bench {

// Runs the loop of expression `name` (relu, silu, dot4, clamp, chain3) over n elements of
// `dtype` (any of the four): inputs[k] is input k of the expression, params[k] its param k; dot4 writes its
// output in place on inputs[2]. False for a name it does not know.
bool run_expr_peer(const std::string& name, DType dtype, std::size_t n, const void* const* inputs, void* out,
                   const double* params);

}  // namespace ew::bench
