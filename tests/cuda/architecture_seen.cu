// The architecture the running device code was compiled for, as a kernel of this test sees
// it: compiled for the same CMAKE_CUDA_ARCHITECTURES as the library's kernels.
#include <cuda_runtime.h>

namespace {
__global__ void report_architecture(int* arch) {
#if defined(__CUDA_ARCH__)
  *arch = __CUDA_ARCH__;
#endif
}
}  // namespace

// __CUDA_ARCH__ of the code that ran (900 for compute_90), or -1 where the kernel did not run.
int architecture_seen_by_a_kernel() {
  int* arch = nullptr;
  int seen = -1;
  if (cudaMalloc(&arch, sizeof(int)) != cudaSuccess) return -1;
  if (cudaMemcpy(arch, &seen, sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess) {
    report_architecture<<<1, 1>>>(arch);
    if (cudaGetLastError() != cudaSuccess || cudaMemcpy(&seen, arch, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess)
      seen = -1;
  }
  cudaFree(arch);
  return seen;
}
