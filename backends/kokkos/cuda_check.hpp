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

}  // namespace ew::detail::kokkos
#endif
