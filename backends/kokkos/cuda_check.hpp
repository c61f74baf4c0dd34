#pragma once
// CUDA runtime calls of the backend's own on Kokkos' Cuda space (Buffers, the context's stream,
// the tile walk's queue, the reductions' scratch): a failure becomes Error(device_error) naming
// the call; and the scope that keeps the calling thread's GPU through every call.
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

// Makes `device` (>= 0) the calling thread's GPU again where it is not, leaving no error of its
// own behind for the application's next CUDA call to find.
inline void give_back_gpu(int device) noexcept {
  int now = device;
  if (device < 0) return;
  if (cudaGetDevice(&now) != cudaSuccess || (now != device && cudaSetDevice(device) != cudaSuccess)) cudaGetLastError();
}

// Makes `device` current for a scope (Kokkos' GPU, where memory and streams must be made
// whatever the application's thread has current) and gives the calling thread its own GPU back
// at the end, whoever changed it meanwhile: Kokkos sets its device as it initializes, as its
// instances start and as they launch, and a library call must not change which GPU the
// application's next CUDA call goes to. With device -1 it only gives the thread's GPU back.
class KokkosDeviceScope {
 public:
  explicit KokkosDeviceScope(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (device >= 0 && device != previous_) check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  KokkosDeviceScope() : KokkosDeviceScope(Kokkos::Cuda().cuda_device()) {}
  ~KokkosDeviceScope() { give_back_gpu(previous_); }
  KokkosDeviceScope(const KokkosDeviceScope&) = delete;
  KokkosDeviceScope& operator=(const KokkosDeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace ew::detail::kokkos
#endif
