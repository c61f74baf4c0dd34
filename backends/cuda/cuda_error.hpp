#pragma once
// CUDA errors as ew::Error: the message carries the CUDA error name and what was being
// done. Out of memory is recoverable (Errc::out_of_memory); errors that leave the CUDA
// context unusable for the rest of the process are Errc::device_fatal. (The context a call
// runs in: thread_context.hpp.)
#include <cuda_runtime.h>

#include <string>

#include "ew/error.hpp"

namespace ew::detail::cuda {

bool is_sticky(cudaError_t e) noexcept;
std::string describe(cudaError_t e);
[[noreturn]] void throw_error(cudaError_t e, const std::string& what);

// Clears the runtime's last error (so the next check does not report it again) and
// throws. Sticky errors cannot be cleared; they stay with the device.
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw_error(e, what);
}

}  // namespace ew::detail::cuda
