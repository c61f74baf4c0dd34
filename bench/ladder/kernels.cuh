#pragma once
// The rungs of the ladder as the literature writes them, one kernel per step, from
// one element per thread with a 32-bit index to float4 grid-stride loops. Each is
// deliberately the textbook version of its step, not a tuned kernel.
#include <cuda_runtime.h>

namespace ew::roofline::ladder {

// c = a + b, one element per thread, 32-bit index, no aliasing promise.
__global__ void add_int_index(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// The same with const __restrict__: the compiler may use the read-only path.
__global__ void add_restrict(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// One 16-byte load per operand and thread; the last n % 4 elements by scalar threads.
__global__ void add_float4(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int n4 = n / 4;
  if (i < n4) {
    float4 x = reinterpret_cast<const float4*>(a)[i], y = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  } else if (int t = 4 * n4 + (i - n4); i >= n4 && t < n) {
    c[t] = a[t] + b[t];
  }
}

// float4 grid-stride loop over a fixed grid (a few blocks per SM), scalar tail.
__global__ void add_float4_grid_stride(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                       int n) {
  int n4 = n / 4, stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 x = reinterpret_cast<const float4*>(a)[i], y = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  for (int t = 4 * n4 + blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) c[t] = a[t] + b[t];
}

constexpr int per_thread = 8;

// 8 elements per thread, each thread a contiguous run: neighbouring threads touch
// addresses 32 bytes apart, so a warp's loads spread over 8x the cache lines.
__global__ void add_8_contiguous(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
#pragma unroll
  for (int j = 0; j < per_thread; ++j)
    if (base + j < n) c[base + j] = a[base + j] + b[base + j];
}

// 8 elements per thread strided by the block: each load of a warp is one 128-byte line.
__global__ void add_8_coalesced(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int base = blockIdx.x * blockDim.x * per_thread + threadIdx.x;
#pragma unroll
  for (int j = 0; j < per_thread; ++j) {
    int i = base + j * blockDim.x;
    if (i < n) c[i] = a[i] + b[i];
  }
}

// SAXPY y = s*x + y as first written; nvcc contracts s*x + y into one FMA by default
// (--fmad=true), which is also what the op table asks for.
__global__ void saxpy_naive(int n, float s, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * x[i] + y[i];
}

__global__ void saxpy_grid_stride(int n, float s, const float* __restrict__ x, float* __restrict__ y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = s * x[i] + y[i];
}

__global__ void saxpy_float4(int n, float s, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, n4 = n / 4;
  if (i < n4) {
    float4 u = reinterpret_cast<const float4*>(x)[i], v = reinterpret_cast<float4*>(y)[i];
    reinterpret_cast<float4*>(y)[i] = make_float4(s * u.x + v.x, s * u.y + v.y, s * u.z + v.z, s * u.w + v.w);
  } else if (int t = 4 * n4 + (i - n4); i >= n4 && t < n) {
    y[t] = s * x[t] + y[t];
  }
}

// Explicit single-rounding FMA: the result no longer depends on --fmad.
__global__ void saxpy_float4_fma(int n, float s, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, n4 = n / 4;
  if (i < n4) {
    float4 u = reinterpret_cast<const float4*>(x)[i], v = reinterpret_cast<float4*>(y)[i];
    reinterpret_cast<float4*>(y)[i] = make_float4(__fmaf_rn(s, u.x, v.x), __fmaf_rn(s, u.y, v.y),
                                                  __fmaf_rn(s, u.z, v.z), __fmaf_rn(s, u.w, v.w));
  } else if (int t = 4 * n4 + (i - n4); i >= n4 && t < n) {
    y[t] = __fmaf_rn(s, x[t], y[t]);
  }
}

}  // namespace ew::roofline::ladder
