#pragma once
// The GPU expression peer of ew-roofline's expressions section: cub::DeviceTransform with
// the formula as a functor compiled ahead of time (expr_functors.cuh), the hand-written
// fused kernel a generated kernel is measured against. Plain C++, so that the roofline's
// host code calls it without CUDA headers.
#include <cstddef>
#include <string>

#include "ew/types.hpp"

namespace ew::bench {

// Enqueues expression `name` (relu, silu, dot4, clamp, chain3) over n elements of `dtype`
// in device memory on `stream` (a cudaStream_t) and returns: inputs[k] is input k of the
// expression, params[k] its param k; dot4 writes its output in place on inputs[2]. False
// for a name it does not know; a CUDA error throws std::runtime_error.
bool run_cuda_expr_peer(const std::string& name, DType dtype, std::size_t n, const void* const* inputs, void* out,
                        const double* params, void* stream);

}  // namespace ew::bench
