// Launches the product's kernels with the policy chosen from the measurements in
// docs/performance/cuda.md (bench/cuda times the alternatives in the same run): below
// 2^20 vectors (16 MiB per array) the per-thread vector kernel, 4 loads in flight,
// evict-first; above that, on sm_90+ and with operands that share the output's
// alignment, the bulk-copy kernel with cub::DeviceTransform's tile size (16-bit results
// leave it through bulk stores, f32 and f64 results element by element). Launches let
// the next op start while this one drains (dependent launch, sm_90+).
#include "kernels.cuh"
#include "kernels.hpp"

namespace ew::detail::cuda {

namespace {

constexpr int kUnroll = 4;
constexpr Hint kHint = Hint::streaming;
// Below this the vector kernel was as fast or faster (H200, 2026-11-22).
constexpr std::uint64_t kBulkMinVectors = std::uint64_t(1) << 20;

template <Op op, class T, bool Aligned>
cudaError_t launch_typed(const StreamArgs<T>& p, int& blocks_per_sm, int& bulk_tile, const LaunchShape& shape,
                         cudaStream_t stream) {
  const bool hopper = sm90_features(shape.major);
  if (Aligned && hopper && p.vectors >= kBulkMinVectors) {
    using Store = std::conditional_t<is_storage16_v<T>, BulkStore, ElementStore>;
    if (bulk_tile == 0) {
      cudaError_t e = bulk_tile_for<op, T, Store>(kBulkBytesInFlightPerSm, bulk_tile);
      if (e != cudaSuccess) return e;
    }
    return launch_kernel(bulk_kernel<op, T, Store>, bulk_blocks(p.vectors, bulk_tile), bulk_shared_bytes<op>(bulk_tile),
                         stream, true, p, bulk_tile);
  }
  auto kernel = stream_kernel<op, T, kUnroll, Aligned, kHint>;
  if (blocks_per_sm == 0) {
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, kThreads, 0);
    if (e != cudaSuccess) return e;
    if (blocks_per_sm < 1) blocks_per_sm = 1;
  }
  const unsigned blocks = grid_blocks(p.vectors, std::uint64_t(blocks_per_sm) * shape.sm_count);
  return launch_kernel(kernel, blocks, 0, stream, hopper, p);
}

template <class T>
cudaError_t launch_dtype(Op op, std::size_t n, const void* a, const void* b, void* out, double s, double t,
                         LaunchShape& shape, cudaStream_t stream) {
  using S = compute_t<T>;
  const StreamArgs<T> p = make_stream_args(n, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out),
                                           static_cast<S>(s), static_cast<S>(t));
  const bool aligned = p.a_vector && p.b_vector;
  return dispatch_op(op, [&](auto o) {
    constexpr Op op_v = decltype(o)::value;
    int(&occupancy)[2] = shape.blocks_per_sm[static_cast<int>(op_v)][static_cast<int>(dtype_v<T>)];
    int& bulk_tile = shape.bulk_tile[static_cast<int>(op_v)][static_cast<int>(dtype_v<T>)];
    return aligned ? launch_typed<op_v, T, true>(p, occupancy[1], bulk_tile, shape, stream)
                   : launch_typed<op_v, T, false>(p, occupancy[0], bulk_tile, shape, stream);
  });
}

__global__ void architecture_probe() {}

}  // namespace

cudaError_t kernel_architecture(int& arch) {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, architecture_probe);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // an answer (no kernel image for this device), not an error for the next call
    return e;
  }
  arch = a.ptxVersion;
  return cudaSuccess;
}

cudaError_t launch(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t,
                   LaunchShape& shape, cudaStream_t stream) {
  switch (dtype) {
    case DType::f32: return launch_dtype<float>(op, n, a, b, out, s, t, shape, stream);
    case DType::f64: return launch_dtype<double>(op, n, a, b, out, s, t, shape, stream);
    case DType::f16: return launch_dtype<half>(op, n, a, b, out, s, t, shape, stream);
    case DType::bf16: break;
  }
  return launch_dtype<bfloat16>(op, n, a, b, out, s, t, shape, stream);
}

}  // namespace ew::detail::cuda
