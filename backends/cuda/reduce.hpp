#pragma once
// The cuda reductions (reduce.cu): one kernel launch per call on the plan's tree
// (ew_internal/reduce_plan.hpp), the result written by the kernel into mapped pinned host
// memory (copied back where the device cannot map host memory).
#include <cuda_runtime.h>

#include <cstddef>

#include "ew_internal/backend_impl.hpp"
#include "kernels.hpp"
#include "reduce_tuning.hpp"

namespace ew::detail::cuda {

// Owns a context's reduction workspace (device memory, grown on demand) and a pinned
// result slot. Calls on one context are serialized by its stream, so one workspace is
// enough. Must be created and destroyed with the context's device current.
class Reducer {
 public:
  Reducer() = default;
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Reads device, managed or pinned memory (pageable host memory is refused by the
  // caller). Waits for the stream, the result on the host when it returns; with
  // call.result, the kernel stores the value there and nothing waits. With call.node, the
  // value is the tree's root before the finish, stored as a double.
  ReduceResult run(const ReduceCall& call, cudaStream_t stream, const LaunchShape& device);

 private:
  void reserve(std::size_t bytes, cudaStream_t stream);
  int staged_blocks(const ReduceCall& call, const ReduceTuning& tuning, int major);
  int resident_blocks(const ReduceCall& call, const ReduceShape* shape);

  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  // CUDA blocks an SM of each staged kernel (f32/f64, kind, ring slots): 0 not asked yet,
  // -1 where the device does not allow its shared memory.
  int staged_resident_[2][4][4] = {};
  // CUDA blocks an SM of the one-pass kernels, 0 not asked yet: dtype, kind (sum, asum, dot,
  // norm2), shape; and of the min/max kernel: dtype, min or max.
  int sum_resident_[4][4][reduce_shape_count] = {};
  int extremum_resident_[4][2] = {};
  void* host_result_ = nullptr;  // pinned, mapped: the host's copy of the result
  void* host_view_ = nullptr;    // the device's address of it (null: copied back instead)
};

}  // namespace ew::detail::cuda
