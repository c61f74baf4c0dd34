// The CUDA peers: cub::DeviceTransform running every op with the op table's own
// formula (ew::apply), and cuBLAS where an op is a BLAS-1 routine (axpy, copy).
// Both enqueue on the caller's stream, so the library and its peers are timed alike.
// f16 and bf16: cub on __half and __nv_bfloat16 arrays with the same functor as the
// library's rule (widen, the op in float, round once to nearest even with CUDA's own
// conversions); cuBLAS's axpy on them (cublasAxpyEx, computing in float).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cub/device/device_transform.cuh>
#include <stdexcept>
#include <string>

#include "cuda/expr_functors.cuh"
#include "event_timer.hpp"
#include "peers.hpp"

namespace ew::bench {

namespace {

void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(e));
}
using ew::bench::check;  // the CUDA overload (event_timer.hpp), not hidden by this one

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

// 16-bit storage as a cub user writes it (expr_functors.cuh): widen, the op in float, round once.
template <Op op, class H>
struct Unary16 {
  float s, t;
  __device__ H operator()(H a) const {
    using W = functors::Storage16<H>;
    return W::narrow(apply<op>(W::widen(a), 0.0f, s, t));
  }
};
template <Op op, class H>
struct Binary16 {
  float s, t;
  __device__ H operator()(H a, H b) const {
    using W = functors::Storage16<H>;
    return W::narrow(apply<op>(W::widen(a), W::widen(b), s, t));
  }
};

// T: the array's element type; S: the scalars' (float for the 16-bit types).
template <class T, class S, template <Op, class> class Un, template <Op, class> class Bin>
void cub_typed(Op op, std::size_t n, const void* a_in, const void* b_in, void* out_in, S s, S t, cudaStream_t stream) {
  const T* a = static_cast<const T*>(a_in);
  const T* b = static_cast<const T*>(b_in);
  T* out = static_cast<T*>(out_in);
  dispatch_op(op, [&](auto o) {
    constexpr Op op_v = decltype(o)::value;
    if constexpr (ReadsB<op_v>::value)
      check(cub::DeviceTransform::Transform(::cuda::std::make_tuple(a, b), out, n, Bin<op_v, T>{s, t}, stream),
            "cub::DeviceTransform");
    else
      check(cub::DeviceTransform::Transform(a, out, n, Un<op_v, T>{s, t}, stream), "cub::DeviceTransform");
  });
}

bool cub_supports(Op, DType) { return true; }

void cub_run(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t,
             void* stream) {
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::f32: return cub_typed<float, float, Unary, Binary>(op, n, a, b, out, float(s), float(t), st);
    case DType::f64: return cub_typed<double, double, Unary, Binary>(op, n, a, b, out, s, t, st);
    case DType::f16: return cub_typed<__half, float, Unary16, Binary16>(op, n, a, b, out, float(s), float(t), st);
    case DType::bf16: return cub_typed<__nv_bfloat16, float, Unary16, Binary16>(op, n, a, b, out, float(s), float(t), st);
  }
}

cublasHandle_t cublas() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    return h;
  }();
  return handle;
}

bool cublas_supports(Op op, DType d) { return op == Op::axpy || (op == Op::copy && !is_storage16(d)); }

// axpy: y = s*x + y with y == out (the op table's b); copy: out = a.
void cublas_run(Op op, DType dtype, std::size_t n, const void* a, const void*, void* out, double s, double,
                void* stream) {
  cublasHandle_t h = cublas();
  check(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  const auto count = static_cast<int64_t>(n);
  if (is_storage16(dtype)) {  // axpy only: float alpha, float arithmetic, 16-bit x and y
    const float alpha = float(s);
    const cudaDataType type = dtype == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
    check(cublasAxpyEx_64(h, count, &alpha, CUDA_R_32F, a, type, 1, out, type, 1, CUDA_R_32F), "cublasAxpyEx");
  } else if (dtype == DType::f32) {
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
