// Which CUDA runtime calls, succeeding, clear an error left pending (the thread's last error)?
// Each call below runs right after a refused cudaSetDevice; the error still pending after it
// is printed. Build: nvcc -O2 -arch=sm_90 last_error_probe.cu -o last_error_probe
#include <cuda_runtime.h>

#include <cstdio>

__global__ void touch(float* p) {
  extern __shared__ float s[];
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  if (p) p[threadIdx.x] = s[threadIdx.x];
}

template <class F>
void probe(const char* name, F&& f) {
  (void)cudaGetLastError();
  cudaSetDevice(1 << 20);
  const cudaError_t e = f();
  const cudaError_t left = cudaPeekAtLastError();
  std::printf("%-48s returned %-24s pending after: %s\n", name, cudaGetErrorName(e), cudaGetErrorName(left));
}

int main() {
  cudaSetDevice(0);
  cudaFree(nullptr);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  float* p = nullptr;
  cudaMalloc(&p, 1 << 20);
  int value = 0, blocks = 0;
  cudaFuncAttributes attributes{};
  probe("cudaGetDevice", [&] { return cudaGetDevice(&value); });
  probe("cudaDeviceGetAttribute", [&] { return cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0); });
  probe("cudaFuncGetAttributes", [&] { return cudaFuncGetAttributes(&attributes, touch); });
  probe("cudaFuncSetAttribute (64 KiB dynamic)", [&] { return cudaFuncSetAttribute(touch, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10); });
  probe("cudaOccupancyMaxActiveBlocksPerMultiprocessor", [&] { return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, touch, 256, 64 << 10); });
  float* freed = nullptr;
  cudaMalloc(&freed, 1 << 20);
  float* allocated = nullptr;
  probe("cudaMalloc", [&] { return cudaMalloc(&allocated, 1 << 20); });
  probe("cudaFree", [&] { return cudaFree(freed); });
  probe("cudaMemsetAsync", [&] { return cudaMemsetAsync(p, 0, 64, stream); });
  probe("cudaMemcpyAsync (device to device)", [&] { return cudaMemcpyAsync(p + 1024, p, 64, cudaMemcpyDeviceToDevice, stream); });
  probe("cudaStreamSynchronize", [&] { return cudaStreamSynchronize(stream); });
  probe("touch<<<1, 256, 64 KiB>>>", [&] { touch<<<1, 256, 64 << 10, stream>>>(p); return cudaSuccess; });
  probe("cudaLaunchKernelEx (64 KiB dynamic)", [&] {
    cudaLaunchConfig_t config{};
    config.gridDim = 1, config.blockDim = 256, config.dynamicSmemBytes = 64 << 10, config.stream = stream;
    return cudaLaunchKernelEx(&config, touch, p);
  });
  void* host = nullptr;
  probe("cudaHostAlloc (mapped)", [&] { return cudaHostAlloc(&host, 64, cudaHostAllocMapped); });
  void* mapped = nullptr;
  probe("cudaHostGetDevicePointer", [&] { return cudaHostGetDevicePointer(&mapped, host, 0); });
  cudaEvent_t event;
  cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  probe("cudaEventRecord", [&] { return cudaEventRecord(event, stream); });
  probe("cudaPointerGetAttributes", [&] { cudaPointerAttributes a{}; return cudaPointerGetAttributes(&a, p); });
  cudaStreamSynchronize(stream);
  std::printf("kernel ran: %s\n", cudaGetErrorName(cudaGetLastError()));
  return 0;
}
