#pragma once
// Fault points: the CUDA calls of the backend whose failure tests provoke on purpose.
// Every such call goes through fault_point(step, call). In the library as built and
// installed, fault_point is the call itself. Where EW_FAULT_INJECTION is defined (only
// in the test-only library elementwise_fault_injection, backends/cuda/CMakeLists.txt)
// a test can make the k-th call of a step return an error of its choice instead of
// running, to check what the backend does when CUDA fails in the middle of an op
// (tests/cuda/test_cuda_faults.cpp).
#include <cuda_runtime.h>

namespace ew::detail::cuda {

enum class Step {
  scratch_alloc,   // cudaMalloc of the pipeline's device scratch
  staging_alloc,   // cudaMallocHost of the pipeline's pinned staging
  host_to_device,  // cudaMemcpyAsync of a chunk to the GPU
  device_to_host,  // cudaMemcpyAsync of a chunk from the GPU
  kernel_launch,   // a kernel launch (pipeline chunk or device-resident op)
  sync,            // waiting for the GPU: cudaEventSynchronize, cudaStreamSynchronize
  order,           // ordering between streams: cudaEventRecord, cudaStreamWaitEvent
};
inline constexpr int kStepCount = 7;

#ifdef EW_FAULT_INJECTION
namespace fault {
// From now on, count the calls of every step; the `nth` call (1-based) of `step`
// returns `error` without running. nth = 0 only counts.
void arm(Step step, long nth, cudaError_t error);
// No more failures; counts keep going.
void disarm();
// Calls of `step` since the last arm().
long calls(Step step);
// Whether the armed failure has happened.
bool fired();
// The error of this call of `step`, or cudaSuccess to run it.
cudaError_t next(Step step);
}  // namespace fault

template <class Call>
cudaError_t fault_point(Step step, Call&& call) {
  const cudaError_t injected = fault::next(step);
  return injected != cudaSuccess ? injected : call();
}
#else
template <class Call>
inline cudaError_t fault_point(Step, Call&& call) {
  return call();
}
#endif

}  // namespace ew::detail::cuda
