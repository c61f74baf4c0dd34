#pragma once
// The host side of the kernels: what a launch needs, without device code, so that
// plain C++ files of the backend can launch any op.
#include <cuda_runtime.h>

#include <cstddef>

#include "ew/ops.hpp"

namespace ew::detail::cuda {

// Per-device launch shape, filled once per context so a launch makes no query.
struct LaunchShape {
  int sm_count = 0;
  int major = 0;  // compute capability: bulk copies and dependent launch need 9
  // Resident blocks per multiprocessor of each kernel, by [op][dtype][aligned];
  // 0 until first asked for (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
  int blocks_per_sm[op_count][2][2] = {};
  // Vectors per tile of the bulk-copy kernel, by [op][dtype]; 0 until first needed.
  int bulk_tile[op_count][2] = {};
};

// Enqueues out = op(a, b) on `stream`; pointers may be at any element offset. Returns
// the launch's error (cudaGetLastError) without throwing.
cudaError_t launch(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t,
                   LaunchShape& shape, cudaStream_t stream);

}  // namespace ew::detail::cuda
