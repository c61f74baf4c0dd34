#pragma once
// The host side of the kernels: what a launch needs, without device code, so that
// plain C++ files of the backend can launch any op.
#include <cuda_runtime.h>

#include <cstddef>

#include "ew/ops.hpp"

namespace ew::detail::cuda {

// Every DType (f32, f64, f16, bf16), indexed by its value.
inline constexpr int kDtypes = 4;

// Per-device launch shape, filled once per context so a launch makes no query.
struct LaunchShape {
  int sm_count = 0;
  int major = 0;  // compute capability: bulk copies and dependent launch need 9
  // Resident blocks per multiprocessor of each kernel, by [op][dtype][aligned];
  // 0 until first asked for (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
  int blocks_per_sm[op_count][kDtypes][2] = {};
  // Vectors per tile of the bulk-copy kernel, by [op][dtype]; 0 until first needed.
  int bulk_tile[op_count][kDtypes] = {};
};

// Enqueues out = op(a, b) on `stream`; pointers may be at any element offset. Returns
// the launch's error (cudaGetLastError) without throwing.
cudaError_t launch(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t,
                   LaunchShape& shape, cudaStream_t stream);

// Enqueues out[i] = in[i] converted from `from` to `to` (two different dtypes), as
// ew/float16.hpp and convert_eval.hpp define it, for n > 0 elements at any element offset;
// `out` is disjoint from `in` or the same bytes. Returns the launch's error (convert.cu).
cudaError_t launch_convert(DType from, DType to, std::size_t n, const void* in, void* out, const LaunchShape& shape,
                           cudaStream_t stream);

}  // namespace ew::detail::cuda
