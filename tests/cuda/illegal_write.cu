// A kernel fault on purpose, for the sticky-error child (sticky_child.cpp): a write to
// an address no allocation holds leaves the CUDA context broken for the process.
#include <cuda_runtime.h>

#include <cstdint>

namespace {
__global__ void write_to(volatile int* p) { *p = 1; }
}  // namespace

cudaError_t launch_illegal_write(cudaStream_t stream) {
  // The pointer comes from the host, so the compiler cannot see that it is invalid.
  write_to<<<1, 1, 0, stream>>>(reinterpret_cast<volatile int*>(std::uintptr_t(0x10)));
  return cudaGetLastError();
}
