// Which runtime calls bind a context to a thread that has none (CUDA 13, one GPU).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <thread>
#include <functional>
static CUresult (*getcur)(CUcontext*);
static CUresult (*setc)(CUcontext);
static CUresult (*retain)(CUcontext*, CUdevice);
static void* fn(const char* n) { void* f=nullptr; cudaDriverEntryPointQueryResult q; cudaGetDriverEntryPointByVersion(n,&f,12000,cudaEnableDefault,&q); return f; }
static CUcontext cur() { CUcontext c=nullptr; getcur(&c); return c; }
static CUcontext primary;
static void run(const char* name, std::function<void()> f) {
  std::thread([&]{ std::printf("%-60s before=%p ", name, (void*)cur()); f(); std::printf("after=%p\n", (void*)cur()); }).join();
}
int main() {
  getcur=(decltype(getcur))fn("cuCtxGetCurrent"); setc=(decltype(setc))fn("cuCtxSetCurrent"); retain=(decltype(retain))fn("cuDevicePrimaryCtxRetain");
  cudaInitDevice(0,0,0); retain(&primary, 0);
  std::printf("primary=%p\n", (void*)primary);
  int d=-1; void* p=nullptr; cudaStream_t s; cudaSetDevice(0); cudaStreamCreate(&s); setc(nullptr);
  run("cudaGetDevice", [&]{ cudaGetDevice(&d); });
  run("cudaGetLastError", [&]{ cudaGetLastError(); });
  run("cudaGetDeviceCount", [&]{ cudaGetDeviceCount(&d); });
  run("cudaSetDevice(0); set(null)", [&]{ cudaSetDevice(0); setc(nullptr); });
  run("cudaSetDevice(0); set(null); cudaGetDevice", [&]{ cudaSetDevice(0); setc(nullptr); cudaGetDevice(&d); });
  run("cudaSetDevice(0); set(null); cudaGetLastError", [&]{ cudaSetDevice(0); setc(nullptr); cudaGetLastError(); });
  run("set(primary); cudaSetDevice(0); set(null); cudaGetDevice", [&]{ setc(primary); cudaSetDevice(0); setc(nullptr); cudaGetDevice(&d); });
  run("set(primary); cudaMalloc; cudaFree; set(null); cudaGetDevice", [&]{ setc(primary); cudaMalloc(&p, 64); cudaFree(p); setc(nullptr); cudaGetDevice(&d); });
  run("set(primary); cudaMalloc; set(null); cudaFree(p)", [&]{ setc(primary); cudaMalloc(&p, 64); setc(nullptr); cudaFree(p); });
  run("cudaStreamSynchronize(s)", [&]{ cudaStreamSynchronize(s); });
  run("cudaPointerGetAttributes", [&]{ cudaPointerAttributes a; cudaPointerGetAttributes(&a, &d); });
  run("cudaGetDriverEntryPoint", [&]{ fn("cuCtxGetCurrent"); });
  run("cudaDeviceGetAttribute", [&]{ cudaDeviceGetAttribute(&d, cudaDevAttrMultiProcessorCount, 0); });
  run("cudaInitDevice", [&]{ cudaInitDevice(0,0,0); });
  return 0;
}
