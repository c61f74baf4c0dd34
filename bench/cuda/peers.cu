// The CUDA peers: cub::DeviceTransform running every op with the op table's own
// formula (ew::apply), and cuBLAS where an op is a BLAS-1 routine (axpy, copy).
// Both enqueue on the caller's stream, so the library and its peers are timed alike.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cub/device/device_transform.cuh>
#include <stdexcept>
#include <string>

#include "peers.hpp"

namespace ew::bench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(e));
}

template <Op op>
struct ReadsB {
  static constexpr bool value = info(op).reads_b();
};

template <Op op, class T>
struct Unary {
  T s, t;
  __device__ T operator()(T a) const { return apply<op>(a, T(0), s, t); }
};
template <Op op, class T>
struct Binary {
  T s, t;
  __device__ T operator()(T a, T b) const { return apply<op>(a, b, s, t); }
};

template <class T>
void cub_typed(Op op, std::size_t n, const T* a, const T* b, T* out, T s, T t, cudaStream_t stream) {
  dispatch_op(op, [&](auto o) {
    constexpr Op op_v = decltype(o)::value;
    if constexpr (ReadsB<op_v>::value)
      check(cub::DeviceTransform::Transform(::cuda::std::make_tuple(a, b), out, n, Binary<op_v, T>{s, t}, stream),
            "cub::DeviceTransform");
    else
      check(cub::DeviceTransform::Transform(a, out, n, Unary<op_v, T>{s, t}, stream), "cub::DeviceTransform");
  });
}

bool cub_supports(Op, DType) { return true; }

void cub_run(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t,
             void* stream) {
  auto st = static_cast<cudaStream_t>(stream);
  if (dtype == DType::f32)
    cub_typed<float>(op, n, static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(out),
                     float(s), float(t), st);
  else
    cub_typed<double>(op, n, static_cast<const double*>(a), static_cast<const double*>(b), static_cast<double*>(out),
                      s, t, st);
}

cublasHandle_t cublas() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    return h;
  }();
  return handle;
}

bool cublas_supports(Op op, DType) { return op == Op::axpy || op == Op::copy; }

// axpy: y = s*x + y with y == out (the op table's b); copy: out = a.
void cublas_run(Op op, DType dtype, std::size_t n, const void* a, const void*, void* out, double s, double,
                void* stream) {
  cublasHandle_t h = cublas();
  check(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  const auto count = static_cast<int64_t>(n);
  if (dtype == DType::f32) {
    const float alpha = float(s);
    if (op == Op::axpy)
      check(cublasSaxpy_64(h, count, &alpha, static_cast<const float*>(a), 1, static_cast<float*>(out), 1), "cublasSaxpy");
    else
      check(cublasScopy_64(h, count, static_cast<const float*>(a), 1, static_cast<float*>(out), 1), "cublasScopy");
  } else {
    if (op == Op::axpy)
      check(cublasDaxpy_64(h, count, &s, static_cast<const double*>(a), 1, static_cast<double*>(out), 1), "cublasDaxpy");
    else
      check(cublasDcopy_64(h, count, static_cast<const double*>(a), 1, static_cast<double*>(out), 1), "cublasDcopy");
  }
}

}  // namespace

std::vector<Peer> cuda_peers() {
  return {{"cub::DeviceTransform", true, &cub_supports, &cub_run}, {"cuBLAS", true, &cublas_supports, &cublas_run}};
}

}  // namespace ew::bench
