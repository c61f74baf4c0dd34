#pragma once
// CUDA runtime calls of the backend's own on Kokkos' Cuda space (Buffers, the context's stream,
// the tile walk's queue, the reductions' scratch): a failure becomes Error(device_error) naming
// the call; and the scope that keeps the calling thread's context through every call.
#include <Kokkos_Core.hpp>

#include <string>

#include "ew/error.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include "../cuda/thread_context.hpp"  // shared with the cuda backend

namespace ew::detail::kokkos {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call is not blamed for it
  throw Error(Errc::device_error, std::string("kokkos backend: ") + what + ": " + cudaGetErrorString(e));
}

using cuda::ContextScope;
using cuda::PrimaryContext;

// Gives the thread back the device the runtime falls back on where no context is current.
// Kokkos makes its GPU the thread's device (cudaSetDevice) as it initializes, as its instances
// start and as they launch; but cudaSetDevice creates the primary context of the GPU it names,
// so `device` is made the thread's device again only where that context already exists: a
// thread that never used CUDA keeps Kokkos' GPU as its fallback rather than getting a context
// on GPU 0 (the device such a thread reports) from a library call. Leaves no error of its own.
inline void give_back_runtime_device(int device) noexcept {
  int now = device;
  if (device < 0 || cudaGetDevice(&now) != cudaSuccess || now == device) {
    cudaGetLastError();
    return;
  }
  const cuda::DriverContextCalls& calls = cuda::driver_context_calls();
  CUdevice handle = 0;
  unsigned int flags = 0;
  int active = 0;
  CUcontext context = nullptr;
  if (calls.missing || calls.device_get(&handle, device) != CUDA_SUCCESS ||
      calls.primary_state(handle, &flags, &active) != CUDA_SUCCESS || !active || calls.get_current(&context) != CUDA_SUCCESS)
    return;
  if (cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
  calls.set_current(context);  // cudaSetDevice also made the device's primary context current
}

// Makes Kokkos' GPU (its primary context) current for a scope and gives the calling thread back
// the context it had, and the device its runtime falls back on, whoever changed them meanwhile
// (context.hpp: no library call changes where the application's next CUDA call goes). A null
// context (Kokkos not initialized yet) changes nothing and only gives back.
class KokkosDeviceScope {
 public:
  KokkosDeviceScope(CUcontext kokkos_gpu, const char* what)
      : device_{current_device()}, context_(kokkos_gpu, what) {}
  // For destructors and exit: never throws, gives back what the driver lets it.
  explicit KokkosDeviceScope(CUcontext kokkos_gpu) noexcept : device_{current_device()}, context_(kokkos_gpu) {}
  KokkosDeviceScope(const KokkosDeviceScope&) = delete;
  KokkosDeviceScope& operator=(const KokkosDeviceScope&) = delete;

 private:
  static int current_device() noexcept {
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) device = -1, cudaGetLastError();
    return device;
  }
  struct DeviceGiveBack {  // destroyed after context_: once the thread's context is back
    int device;
    ~DeviceGiveBack() { give_back_runtime_device(device); }
  };
  DeviceGiveBack device_;
  ContextScope context_;
};

}  // namespace ew::detail::kokkos
#endif
