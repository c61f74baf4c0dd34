// Can an application make a launch fail, in a way a test can repeat? Kernels whose threads
// need local memory (a stack frame) get it from a reservation the driver keeps per context
// and grows at launch; with the stack limit lowered and the GPU's memory taken, the growth
// has nowhere to go. Prints each launch's status. nvcc -arch=sm_90 -O2 starved_launch_probe.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

template <int Words>
__global__ void with_frame(int* out, int k) {
  volatile int local[Words];  // indexed at run time: in local memory
#pragma unroll 1
  for (int i = 0; i < Words; ++i) local[(i * k) % Words] = i * k + threadIdx.x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = local[(threadIdx.x * k) % Words];
}
__global__ void frameless(int* out, int k) { out[blockIdx.x * blockDim.x + threadIdx.x] = k; }

static std::vector<void*> take_all() {
  std::vector<void*> held;
  for (size_t chunk = size_t(1) << 32; chunk >= (size_t(1) << 12);) {
    void* p = nullptr;
    if (cudaMalloc(&p, chunk) == cudaSuccess) held.push_back(p);
    else cudaGetLastError(), chunk /= 2;
  }
  return held;
}
static void give_back(std::vector<void*>& held) {
  for (void* p : held) cudaFree(p);
  held.clear();
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int blocks = sms * 16, threads = 128;
  int* out = nullptr;
  cudaMalloc(&out, size_t(blocks) * threads * sizeof(int));
  auto launch_all = [&](const char* when) {
    struct { const char* name; void (*k)(int*, int); } ks[] = {
        {"frameless", frameless}, {"64 B frame", with_frame<16>}, {"4 KiB frame", with_frame<1024>}};
    for (auto& k : ks) {
      k.k<<<blocks, threads>>>(out, 3);
      const cudaError_t launched = cudaGetLastError();
      const cudaError_t synced = cudaDeviceSynchronize();
      std::printf("%-28s %-12s launch %-32s sync %s\n", when, k.name, cudaGetErrorName(launched), cudaGetErrorName(synced));
      cudaGetLastError();
    }
  };
  size_t limit = 0, free_b = 0, total = 0;
  cudaDeviceGetLimit(&limit, cudaLimitStackSize);
  std::printf("stack limit at start: %zu bytes\n", limit);
  launch_all("plain");
  std::vector<void*> held = take_all();
  cudaMemGetInfo(&free_b, &total);
  std::printf("memory taken: %zu allocations, %zu bytes free\n", held.size(), free_b);
  launch_all("memory taken");
  give_back(held);
  for (size_t want : {size_t(0), size_t(64)}) {
    const cudaError_t set = cudaDeviceSetLimit(cudaLimitStackSize, want);
    cudaDeviceGetLimit(&limit, cudaLimitStackSize);
    std::printf("set stack limit %zu: %s, now %zu\n", want, cudaGetErrorName(set), limit);
    cudaGetLastError();
    held = take_all();
    cudaMemGetInfo(&free_b, &total);
    std::printf("memory taken: %zu allocations, %zu bytes free\n", held.size(), free_b);
    char when[64];
    std::snprintf(when, sizeof when, "limit %zu, memory taken", want);
    launch_all(when);
    give_back(held);
    std::snprintf(when, sizeof when, "limit %zu, memory back", want);
    launch_all(when);
  }
  cudaDeviceSetLimit(cudaLimitStackSize, 1024);
  launch_all("limit 1024 again");
  return 0;
}
