#pragma once
// CUDA runtime calls of the backend's own on Kokkos' Cuda space (the tile walk's queue, the
// reductions' scratch): a failure becomes Error(device_error) naming the call.
#include <Kokkos_Core.hpp>

#include <string>

#include "ew/error.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
namespace ew::detail::kokkos {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call is not blamed for it
  throw Error(Errc::device_error, std::string("kokkos backend: ") + what + ": " + cudaGetErrorString(e));
}

// Makes Kokkos' GPU current for a scope and gives the calling thread its own back: memory and
// streams must be made on the GPU Kokkos runs on whatever the application's thread has
// current. (Kokkos' own instances set their device as they start, so a context's creation may
// still leave Kokkos' GPU current.)
class KokkosDeviceScope {
 public:
  KokkosDeviceScope() : device_(Kokkos::Cuda().cuda_device()) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device_) check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  }
  ~KokkosDeviceScope() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  KokkosDeviceScope(const KokkosDeviceScope&) = delete;
  KokkosDeviceScope& operator=(const KokkosDeviceScope&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

}  // namespace ew::detail::kokkos
#endif
