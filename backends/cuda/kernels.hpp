#pragma once
// The host side of the kernels: what a launch needs, without device code, so that
// plain C++ files of the backend can launch any op.
#include <cuda_runtime.h>

#include <cstddef>

#include "ew/ops.hpp"

namespace ew::detail::cuda {

// Every DType (f32, f64, f16, bf16), indexed by its value.
inline constexpr int kDtypes = 4;

// Bulk copies (cp.async.bulk), the wait for the previous grid (programmatic dependent launch)
// and the staged reductions are sm_90 instructions: code compiled for an older architecture
// has none of them (its kernels compile them out), so it must be launched without them.
// `major` is that of the code that runs (LaunchShape::major; the device's own for NVRTC code).
constexpr bool sm90_features(int major) { return major >= 9; }

// Per-device launch shape, filled once per context so a launch makes no query.
struct LaunchShape {
  int sm_count = 0;
  // The compute capability (major) the product's kernels run as: the device's, or lower
  // where this build has no code for the device (kernel_architecture). Bulk copies,
  // dependent launch and the staged reductions need 9.
  int major = 0;
  double memory_bytes_per_second = 0;  // the memory's peak (0 where the GPU reports no clock or no bus width)
  // Resident blocks per multiprocessor of each kernel, by [op][dtype][aligned];
  // 0 until first asked for (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
  int blocks_per_sm[op_count][kDtypes][2] = {};
  // Vectors per tile of the bulk-copy kernel, by [op][dtype]; 0 until first needed.
  int bulk_tile[op_count][kDtypes] = {};
};

// The virtual architecture (90 for compute_90) the product's nvcc-compiled kernels run as on
// the current device: the device's own where the build has code for it; an older one where
// it has not (CMAKE_CUDA_ARCHITECTURES without the device's, e.g. 80 on an H100: the driver
// compiles the compute_80 PTX; or sm_80 code on an sm_86 GPU). Code compiled for an
// architecture below 90 has no bulk copies and no wait for the previous grid, so it must be
// launched as on a pre-sm_90 GPU. An error where no code of the build runs on the device
// (or the device's own error). Every .cu file of the backend is compiled for the same
// architectures.
cudaError_t kernel_architecture(int& arch);

// Enqueues out = op(a, b) on `stream`; pointers may be at any element offset. Returns
// the launch's own status without throwing.
cudaError_t launch(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t,
                   LaunchShape& shape, cudaStream_t stream);

// Enqueues out[i] = in[i] converted from `from` to `to` (two different dtypes), as
// ew/float16.hpp and convert_eval.hpp define it, for n > 0 elements at any element offset;
// `out` is disjoint from `in` or the same bytes. Returns the launch's error (convert.cu).
cudaError_t launch_convert(DType from, DType to, std::size_t n, const void* in, void* out, const LaunchShape& shape,
                           cudaStream_t stream);

}  // namespace ew::detail::cuda
