// ew/detail/math.hpp and ew/detail/scalar_kit.hpp as CUDA device code: a kernel that
// calls every function in float and double, and the same from host code compiled by nvcc.
// Compiled (not run) by the math_cuda_device_compile test with warnings as errors, so a
// host-only call reachable from device code fails it.
#include "ew/detail/math.hpp"
#include "ew/detail/scalar_kit.hpp"

namespace {

template <class T>
__host__ __device__ void apply_all(const T* x, T* out, int i, int n) {
  using K = ew::math::ScalarKit<T>;
  const T a = x[i], b = x[(i + 1) % n];
  out[i] = ew::math::exp<K>(a);
  out[n + i] = ew::math::log<K>(a);
  out[2 * n + i] = ew::math::tanh<K>(a);
  out[3 * n + i] = ew::math::sigmoid<K>(a);
  out[4 * n + i] = ew::math::round<K>(a);
  out[5 * n + i] = ew::math::min<K>(a, b);
  out[6 * n + i] = ew::math::max<K>(a, b);
  out[7 * n + i] = K::add(K::sqrt(K::abs(a)), K::fma(K::floor(a), K::ceil(b), K::trunc(a)));
}

template <class T>
__global__ void apply_kernel(const T* x, T* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) apply_all(x, out, i, n);
}

}  // namespace

void launch_math_check(const float* xf, float* of, const double* xd, double* od, int n) {
  apply_kernel<<<(n + 127) / 128, 128>>>(xf, of, n);
  apply_kernel<<<(n + 127) / 128, 128>>>(xd, od, n);
}

void host_math_check(const float* xf, float* of, const double* xd, double* od, int n) {
  for (int i = 0; i < n; ++i) apply_all(xf, of, i, n), apply_all(xd, od, i, n);
}
