#pragma once
// Launches made to fail on purpose, for the tests that a GPU backend reports a failed launch.
// The local memory a kernel's threads need (its stack frame) comes from a reservation the
// driver keeps for the context and grows at launch. With the context's stack limit at its least
// and the GPU's memory taken, a kernel with a frame cannot launch (cudaErrorMemoryAllocation,
// not sticky) while one without a frame still runs
// (bench/cuda/results/h200-2026-12-02-kokkos-launches/starved_launch_probe.cu). The limit and
// the memory belong to the GPU's primary context, which the library's runtime and the test's
// share, so a test can starve the library's launches. It takes the whole GPU's memory for a
// moment: such tests run alone (RUN_SERIAL). Shared by the cuda and the kokkos tests.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace ew::test {

// The context's stack limit at its least and the GPU's memory taken, while it lives.
class StarvedLaunches {
 public:
  StarvedLaunches() {
    if (cudaDeviceGetLimit(&limit_, cudaLimitStackSize) != cudaSuccess ||
        cudaDeviceSetLimit(cudaLimitStackSize, 0) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    lowered_ = true;
    for (std::size_t chunk = std::size_t(1) << 32; chunk >= (std::size_t(1) << 12);) {
      void* p = nullptr;
      if (cudaMalloc(&p, chunk) == cudaSuccess)
        held_.push_back(p);
      else
        cudaGetLastError(), chunk /= 2;
    }
  }
  ~StarvedLaunches() {
    for (void* p : held_) cudaFree(p);
    if (lowered_) cudaDeviceSetLimit(cudaLimitStackSize, limit_);
    cudaGetLastError();
  }
  StarvedLaunches(const StarvedLaunches&) = delete;
  StarvedLaunches& operator=(const StarvedLaunches&) = delete;
  bool ready() const { return lowered_ && !held_.empty(); }

 private:
  std::size_t limit_ = 0;
  bool lowered_ = false;
  std::vector<void*> held_;
};

}  // namespace ew::test
