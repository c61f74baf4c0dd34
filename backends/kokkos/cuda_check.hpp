#pragma once
// CUDA runtime calls of the backend's own on Kokkos' Cuda space (Buffers, the context's stream,
// the tile walk's queue, the reductions' scratch): a failure becomes Error(device_error), or
// out_of_memory, naming the call; and the scope that keeps the calling thread's context
// through every call.
#include <Kokkos_Core.hpp>

#include <string>

#include "ew/error.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include "../cuda/thread_context.hpp"  // shared with the cuda backend

namespace ew::detail::kokkos {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call is not blamed for it
  // Memory refused (an allocation, or a launch's local memory) is out_of_memory, as on cuda.
  throw Error(e == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::device_error,
              std::string("kokkos backend: ") + what + ": " + cudaGetErrorString(e));
}

// Kokkos returns no status from a launch (and checks none but in debug builds): a launch that
// failed shows only as the thread's last error in the library's runtime (its own: Kokkos'
// launch code is compiled into the library). `before` is that error as the call began, left
// by an earlier call: neither reported as these launches' nor cleared. (A launch failing with
// the very error already pending cannot be told from it.)
inline void check_launches(cudaError_t before, const char* what) {
  if (cudaPeekAtLastError() != before) check_cuda(cudaGetLastError(), what);
}

using cuda::ContextScope;
using cuda::ContextStackScope;
using cuda::GpuContext;

// Gives the thread back the device the runtime falls back on where no context is current.
// Kokkos makes its GPU the thread's device (cudaSetDevice) as it initializes, as its instances
// start and as they launch; but cudaSetDevice creates the primary context of the GPU it names,
// so `device` is made the thread's device again only where that context already exists: a
// thread that never used CUDA keeps Kokkos' GPU as its fallback rather than getting a context
// on GPU 0 (the device such a thread reports) from a library call. Clears only an error of its
// own.
inline void give_back_runtime_device(int device) noexcept {
  int now = device;
  if (device < 0) return;
  if (cudaGetDevice(&now) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (now == device || !cuda::primary_context_active(device)) return;
  const cuda::DriverContextCalls& calls = cuda::driver_context_calls();
  CUcontext context = nullptr;
  if (calls.get_current(&context) != CUDA_SUCCESS) return;
  if (cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
  calls.set_current(context);  // cudaSetDevice also made the device's primary context current
}

// Kokkos' GPU current for a call: the calling thread's context given back at its end, then,
// where its GPU has a context, the device its runtime falls back on (give_back_runtime_device;
// where the thread has a context current, the runtime reports that context's device and a
// fallback that Kokkos' launches moved stays moved: docs/kokkos.md). context.hpp: no library
// call changes the thread's context.
class KokkosDeviceScope {
 public:
  // Throws Error where Kokkos' GPU cannot be made current.
  KokkosDeviceScope(CUcontext kokkos_gpu, const char* what) : device_{current_device()}, context_(kokkos_gpu, what) {}
  // For destructors and other paths that cannot throw.
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

// Kokkos launches and allocates on its GPU's primary context whatever the stream (it makes its
// GPU current by device): a borrowed stream of any other context (an application's own, another
// GPU's) is refused with the reason. Null or a default stream's handle: nothing to check.
inline void check_borrowed_stream(void* stream, int kokkos_device) {
  const CUcontext own = cuda::context_of_stream(stream);
  if (own && own != cuda::primary_context_of(kokkos_device))
    throw Error(Errc::invalid_argument, "kokkos backend: ContextOptions::stream belongs to a CUDA context other than GPU " +
                                            std::to_string(kokkos_device) +
                                            "'s primary context, where Kokkos launches and allocates");
}

}  // namespace ew::detail::kokkos
#endif
