#pragma once
// Peers of the reductions (ew/reduce.hpp): what a user writes without the library. None
// is reproducible: an OpenMP reduction's bits change with the thread count, cub's and
// cuBLAS's with the GPU and the version.
#include <cstddef>
#include <string>
#include <vector>

#include "ew/types.hpp"

namespace ew::bench {

enum class Reduction { sum, dot, norm2 };
inline constexpr Reduction all_reductions[] = {Reduction::sum, Reduction::dot, Reduction::norm2};
constexpr const char* to_string(Reduction r) { return r == Reduction::sum ? "sum" : r == Reduction::dot ? "dot" : "norm2"; }

struct ReducePeer {
  const char* name;  // "openmp reduction", "cub::DeviceReduce", "cublas dot/nrm2", ...
  bool on_device;    // operands in CUDA device memory
  bool (*supports)(Reduction r, DType dtype, std::size_t n);
  // The value, on the host when it returns (device peers run on `stream`, a cudaStream_t).
  double (*run)(Reduction r, DType dtype, std::size_t n, const void* x, const void* y, void* stream);
};

// A GPU peer in the form a solver uses between kernels: the value written into `result`
// (one element of the data's type in device memory, a float for 16-bit data; the sum of squares for norm2 where
// the peer has no 2-norm) and enqueued on `stream` (a cudaStream_t) without waiting.
struct DeviceReducePeer {
  const char* name;
  bool reproducible;  // the same bits on every GPU and run
  bool (*supports)(Reduction r, DType dtype, std::size_t n);
  void (*enqueue)(Reduction r, DType dtype, std::size_t n, const void* x, const void* y, void* result, void* stream);
};

// bench/cpu/reduce_peers.cpp (target ew_peers_cpu): `parallel for simd reduction(+:)` loops
// accumulating in the data's type, and in double (the library's accumulation without its
// fixed tree: what reproducibility costs).
std::vector<ReducePeer> cpu_reduce_peers();
// bench/cuda/reduce_peers.cu (target ew_peers_cuda): cub::DeviceReduce (Sum, TransformReduce
// for dot and the sum of squares; 16-bit data on __half / __nv_bfloat16 widened to float,
// accumulated in float) and cuBLAS (dot, nrm2; f32 and f64).
std::vector<ReducePeer> cuda_reduce_peers();
// Reductions over an expression of two arrays a and b of one dtype (ew/expr_reduce.hpp): the
// library evaluates the expression chunk by chunk into cache and reduces it there in one
// call. 16-bit data: the expression computed in float, as the library computes it.
enum class ExprReduction { sum_sq_diff, asum_product };
inline constexpr ExprReduction all_expr_reductions[] = {ExprReduction::sum_sq_diff, ExprReduction::asum_product};
constexpr const char* to_string(ExprReduction r) { return r == ExprReduction::sum_sq_diff ? "sum((a-b)^2)" : "asum(a*b)"; }

struct ExprReducePeer {
  const char* name;
  bool (*supports)(ExprReduction r, DType dtype, std::size_t n);
  // The value, on the host when it returns (device peers run on `stream`, a cudaStream_t).
  double (*run)(ExprReduction r, DType dtype, std::size_t n, const void* a, const void* b, void* stream);
};
// bench/cpu/reduce_peers.cpp: one `parallel for simd reduction(+:)` loop computing the
// expression per element (accumulating in the data's type, float for 16-bit data).
std::vector<ExprReducePeer> cpu_expr_reduce_peers();
// bench/cuda/reduce_peers.cu: cub::DeviceReduce::TransformReduce over the indices with the
// expression as its functor (accumulating in the data's type, float for 16-bit data).
std::vector<ExprReducePeer> cuda_expr_reduce_peers();

// min_element/max_element's peer on the GPU: cub::DeviceReduce::ArgMin / ArgMax (the first
// index of the smallest / largest value by cub's `<`; with NaN the result depends on the order
// of its comparisons), f32 and f64, value and index brought to the host in one copy into pinned
// memory (the library's kernel writes its own into mapped pinned memory; cub writes device
// memory only) (`stream` a cudaStream_t).
struct ValueIndex {
  double value;
  std::size_t index;
};
ValueIndex cub_extremum(bool is_min, DType dtype, std::size_t n, const void* x, void* stream);

// The same in the device-resident form, and "atomic (not reproducible)": the library's
// accumulation in double from 16-byte loads, without its fixed tree (each CUDA block's
// partial added with atomicAdd in whatever order the blocks finish): what reproducibility
// costs on the GPU. sum and dot. Beside it the same kernel reading in the library's element
// order ("atomic, plan order"; "atomic, staged plan order": the same order with warps on plan
// blocks in grid-stride order, each brought into shared memory by the copy engine, sm_90+, its
// ring 2 x 8 KiB a warp, or other rings: "atomic, staged plan order, 4 KiB x 4", "2 KiB x 8",
// "4 KiB x 2", "8 KiB x 1", one CUDA block an SM; "..., warp-major deal": the last partial round of plan
// blocks spread over every SM instead of the first CUDA blocks' warps) and
// with 2 or 1 instead of 4 loads in flight per thread ("atomic, 2 loads", "atomic, 1 load": a
// half and a quarter of its bytes in flight). "ordered finish" and "ordered finish, staged plan
// order": the grid-stride and staged kernels with the finish a fixed order needs instead of
// atomicAdd (each block's sum in its own slot, the last block adding the slots in block order):
// what that finish costs apart from the reading order; "ordered finish in one warp, staged plan
// order": the same finish by warp 0 of the last block alone, without a block-wide tree.
std::vector<DeviceReducePeer> cuda_reduce_device_peers();

// ew-cuda-reduce-bench --timeline: where a call's time goes in the bench kernels above. Their
// timed forms write the GPU's %globaltimer (ns) at fixed points of `calls` calls back to back.
struct Timeline {
  static constexpr int warps = 8;  // a CUDA block's
  // A CUDA block's stamps in a call: when each warp starts (after the wait for the grid before),
  // when its last piece is in shared memory (staged kernels), when its reads and adds are done;
  // the block's sum ready, the finish's counter answered, and (the last block) the value
  // written; and the SM it ran on (an index, not a time). 0 where not written.
  enum : int { warp_start = 0, warp_landed = 8, warp_done = 16, block_sum = 24, arrived = 25, result = 26, sm = 27, slots = 28 };
  unsigned ctas = 0;
  int calls = 0;
  std::vector<unsigned long long> stamps;  // [call][cta][slot]
};
// The bench kernels with a timed form, by their rows' names.
std::vector<std::string> cuda_reduce_timeline_kernels();
Timeline cuda_reduce_timeline(const std::string& kernel, Reduction r, DType dtype, std::size_t n, const void* x,
                              const void* y, void* result, void* stream, int calls);

}  // namespace ew::bench
