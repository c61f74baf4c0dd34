#pragma once
// The plain interface of the Highway kernels (kernels.cc): no Highway header here, so
// backend.cpp and the tests stay free of HWY_* machinery.
#include <cstddef>
#include <string>

#include "ew/ops.hpp"

namespace ew::detail::highway {

// One thread's contiguous piece of an op on the best target of this CPU (or the one a
// test forced). For in-place ops b == out; b is null when the op reads one stream.
// `stream`: non-temporal stores for the vector-aligned body of the output.
void run_chunk(Op op, std::size_t n, const float* a, const float* b, float* out, float s, float t, bool stream);
void run_chunk(Op op, std::size_t n, const double* a, const double* b, double* out, double s, double t,
               bool stream);

void run_chunk(Op op, std::size_t n, const half* a, const half* b, half* out, float s, float t, bool stream);
void run_chunk(Op op, std::size_t n, const bfloat16* a, const bfloat16* b, bfloat16* out, float s, float t,
               bool stream);
// One thread's piece of ew::convert (n elements from `in` to `out`).
void convert_chunk(DType from, DType to, std::size_t n, const void* in, void* out);

// The target the next call dispatches to ("AVX2", "SSE4", ...).
const char* chosen_target();
// The targets compiled into the library, best first ("AVX3 AVX2 SSE4 SSSE3 EMU128").
std::string compiled_targets();

}  // namespace ew::detail::highway
