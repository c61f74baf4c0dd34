#pragma once
// The grid every kernel of the backend on Cuda is sized by: the threads that stay resident,
// `blocks` blocks of `block_threads` on every SM (the kernel's launch bounds), fewer where an
// SM holds fewer threads (1536 on sm_86 and sm_89, 2048 on sm_80 and sm_90). A grid of more
// threads leaves a late wave of a few blocks an SM reading at a fraction of the memory's
// speed; one of fewer leaves thread slots empty. Host spaces, where only tests launch these
// kernels, take the same share of concurrency().
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace ew::detail::kokkos {

template <class Exec>
std::int64_t resident_threads(const Exec& exec, int blocks, int block_threads) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
    const auto& device = exec.cuda_device_prop();
    const int fit = std::max(1, device.maxThreadsPerMultiProcessor / block_threads);
    return std::int64_t(device.multiProcessorCount) * std::min(blocks, fit) * block_threads;
  }
#endif
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(exec.concurrency()) * blocks * block_threads / 2048);
}

}  // namespace ew::detail::kokkos
