// GPU peers of the reductions (bench/reduce_peers.hpp): cub::DeviceReduce and cuBLAS on the
// caller's stream, each returning its value on the host (as the library's calls do).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cub/device/device_reduce.cuh>
#include <stdexcept>
#include <string>
#include <thrust/iterator/counting_iterator.h>

#include "reduce_peers.hpp"

namespace ew::bench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(e));
}

template <class T>
struct Product {
  const T* x;
  const T* y;
  __device__ T operator()(long long i) const { return x[i] * y[i]; }
};
template <class T>
struct Square {
  __device__ T operator()(T v) const { return v * v; }
};

// cub's scratch and result, kept between calls (grown when needed).
struct Scratch {
  void* temp = nullptr;
  std::size_t bytes = 0;
  double* out = nullptr;
  void reserve(std::size_t b) {
    if (!out) check(cudaMalloc(&out, sizeof(double)), "cudaMalloc");
    if (b <= bytes) return;
    if (temp) check(cudaFree(temp), "cudaFree");
    check(cudaMalloc(&temp, b), "cudaMalloc");
    bytes = b;
  }
};
Scratch& scratch() {
  static Scratch s;
  return s;
}

template <class T>
double cub_typed(Reduction r, std::size_t n, const T* x, const T* y, cudaStream_t stream) {
  Scratch& s = scratch();
  s.reserve(0);
  T* out = reinterpret_cast<T*>(s.out);
  const auto count = static_cast<long long>(n);
  std::size_t bytes = 0;
  const auto run = [&](void* temp) {
    if (r == Reduction::sum) return cub::DeviceReduce::Sum(temp, bytes, x, out, count, stream);
    if (r == Reduction::dot)
      return cub::DeviceReduce::TransformReduce(temp, bytes, thrust::counting_iterator<long long>(0), out, count,
                                                ::cuda::std::plus<>{}, Product<T>{x, y}, T(0), stream);
    return cub::DeviceReduce::TransformReduce(temp, bytes, x, out, count, ::cuda::std::plus<>{}, Square<T>{}, T(0),
                                              stream);
  };
  check(run(nullptr), "cub::DeviceReduce");
  s.reserve(bytes);
  check(run(s.temp), "cub::DeviceReduce");
  T host{};
  check(cudaMemcpyAsync(&host, out, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return r == Reduction::norm2 ? std::sqrt(static_cast<double>(host)) : static_cast<double>(host);
}

bool cub_supports(Reduction, DType, std::size_t) { return true; }
double cub_run(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (d == DType::f32) return cub_typed(r, n, static_cast<const float*>(x), static_cast<const float*>(y), s);
  return cub_typed(r, n, static_cast<const double*>(x), static_cast<const double*>(y), s);
}

cublasHandle_t cublas() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    return h;
  }();
  return handle;
}

// cuBLAS has no plain sum (asum sums magnitudes); its int interface stops below 2^31.
bool cublas_supports(Reduction r, DType, std::size_t n) { return r != Reduction::sum && n < (std::size_t(1) << 31); }
double cublas_run(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* stream) {
  cublasHandle_t h = cublas();
  check(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  const int count = static_cast<int>(n);
  if (d == DType::f32) {
    float v = 0;
    const auto* xf = static_cast<const float*>(x);
    if (r == Reduction::dot) check(cublasSdot(h, count, xf, 1, static_cast<const float*>(y), 1, &v), "cublasSdot");
    else check(cublasSnrm2(h, count, xf, 1, &v), "cublasSnrm2");
    return v;
  }
  double v = 0;
  const auto* xd = static_cast<const double*>(x);
  if (r == Reduction::dot) check(cublasDdot(h, count, xd, 1, static_cast<const double*>(y), 1, &v), "cublasDdot");
  else check(cublasDnrm2(h, count, xd, 1, &v), "cublasDnrm2");
  return v;
}

}  // namespace

std::vector<ReducePeer> cuda_reduce_peers() {
  return {{"cub::DeviceReduce", true, &cub_supports, &cub_run}, {"cublas dot/nrm2", true, &cublas_supports, &cublas_run}};
}

}  // namespace ew::bench
