// GPU peers of the reductions (bench/reduce_peers.hpp): cub::DeviceReduce and cuBLAS on the
// caller's stream, each returning its value on the host (as the library's calls do).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cuda/atomic>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <type_traits>
#include <cub/device/device_reduce.cuh>
#include <stdexcept>
#include <string>
#include <thrust/iterator/counting_iterator.h>

#include "event_timer.hpp"
#include "kernels.cuh"  // backends/cuda: the copy engine's bulk instructions
#include "reduce_peers.hpp"

namespace ew::bench {

namespace {

void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(e));
}
using ew::bench::check;  // the CUDA overload (event_timer.hpp), not hidden by this one

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

// cub::DeviceReduce into device memory, enqueued on the stream.
template <class T>
void cub_enqueue_typed(Reduction r, std::size_t n, const T* x, const T* y, T* out, cudaStream_t stream) {
  Scratch& s = scratch();
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
}

// 16-bit data: cub over __half / __nv_bfloat16, each element widened to float and
// accumulated in float (TransformReduce: the accumulator is the initial value's type), as
// a user of cub would write it.
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class S>
struct Widen16 {
  __device__ float operator()(S v) const { return to_float(v); }
};
template <class S>
struct Product16 {
  const S* x;
  const S* y;
  __device__ float operator()(long long i) const { return to_float(x[i]) * to_float(y[i]); }
};
template <class S>
struct Square16 {
  __device__ float operator()(S v) const { return to_float(v) * to_float(v); }
};

template <class S>
void cub_enqueue16(Reduction r, std::size_t n, const S* x, const S* y, float* out, cudaStream_t stream) {
  Scratch& s = scratch();
  const auto count = static_cast<long long>(n);
  std::size_t bytes = 0;
  const auto run = [&](void* temp) {
    if (r == Reduction::sum)
      return cub::DeviceReduce::TransformReduce(temp, bytes, x, out, count, ::cuda::std::plus<>{}, Widen16<S>{}, 0.0f,
                                                stream);
    if (r == Reduction::dot)
      return cub::DeviceReduce::TransformReduce(temp, bytes, thrust::counting_iterator<long long>(0), out, count,
                                                ::cuda::std::plus<>{}, Product16<S>{x, y}, 0.0f, stream);
    return cub::DeviceReduce::TransformReduce(temp, bytes, x, out, count, ::cuda::std::plus<>{}, Square16<S>{}, 0.0f,
                                              stream);
  };
  check(run(nullptr), "cub::DeviceReduce");
  s.reserve(bytes);
  check(run(s.temp), "cub::DeviceReduce");
}

template <class S>
double cub_typed16(Reduction r, std::size_t n, const S* x, const S* y, cudaStream_t stream) {
  Scratch& s = scratch();
  s.reserve(0);
  float* out = reinterpret_cast<float*>(s.out);
  cub_enqueue16(r, n, x, y, out, stream);
  float host = 0;
  check(cudaMemcpyAsync(&host, out, sizeof(float), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return r == Reduction::norm2 ? std::sqrt(static_cast<double>(host)) : static_cast<double>(host);
}

// The host form: the device-resident one, then the value brought back.
template <class T>
double cub_typed(Reduction r, std::size_t n, const T* x, const T* y, cudaStream_t stream) {
  Scratch& s = scratch();
  s.reserve(0);
  T* out = reinterpret_cast<T*>(s.out);
  cub_enqueue_typed(r, n, x, y, out, stream);
  T host{};
  check(cudaMemcpyAsync(&host, out, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return r == Reduction::norm2 ? std::sqrt(static_cast<double>(host)) : static_cast<double>(host);
}

bool cub_supports(Reduction, DType, std::size_t) { return true; }
double cub_run(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (d == DType::f16) return cub_typed16(r, n, static_cast<const __half*>(x), static_cast<const __half*>(y), s);
  if (d == DType::bf16)
    return cub_typed16(r, n, static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(y), s);
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
bool cublas_supports(Reduction r, DType d, std::size_t n) {
  return r != Reduction::sum && !is_storage16(d) && n < (std::size_t(1) << 31);
}
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

// Device-resident forms.
void cub_enqueue(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (d == DType::f16)
    cub_enqueue16(r, n, static_cast<const __half*>(x), static_cast<const __half*>(y), static_cast<float*>(result), s);
  else if (d == DType::bf16)
    cub_enqueue16(r, n, static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(y),
                  static_cast<float*>(result), s);
  else if (d == DType::f32)
    cub_enqueue_typed(r, n, static_cast<const float*>(x), static_cast<const float*>(y), static_cast<float*>(result), s);
  else
    cub_enqueue_typed(r, n, static_cast<const double*>(x), static_cast<const double*>(y), static_cast<double*>(result), s);
}

void cublas_enqueue(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  cublasHandle_t h = cublas();
  check(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
  const int count = static_cast<int>(n);
  cublasStatus_t e;
  if (d == DType::f32) {
    const auto* xf = static_cast<const float*>(x);
    auto* out = static_cast<float*>(result);
    e = r == Reduction::dot ? cublasSdot(h, count, xf, 1, static_cast<const float*>(y), 1, out)
                            : cublasSnrm2(h, count, xf, 1, out);
  } else {
    const auto* xd = static_cast<const double*>(x);
    auto* out = static_cast<double*>(result);
    e = r == Reduction::dot ? cublasDdot(h, count, xd, 1, static_cast<const double*>(y), 1, out)
                            : cublasDnrm2(h, count, xd, 1, out);
  }
  check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  check(e, "cublas dot/nrm2");
}

// "atomic": a thread accumulates in double (as the library does) from 16-byte loads,
// `unroll` (4) of them in flight, grid-stride over one wave of blocks; the block's partial goes
// to one double with atomicAdd (the order the blocks finish in: not reproducible); the last
// block writes the result in the data's type and resets the accumulator and the counter for
// the next call. Launched as the library launches its reductions (programmatic dependent
// launch on sm_90+), so that the library's time over it is what the fixed tree costs and
// nothing else.
constexpr int atomic_threads = 256;
constexpr unsigned max_finish_slots = 4096;  // CUDA blocks a launch_atomic grid has at most

__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// One wave of the kernel's own resident blocks: each kernel's registers decide its occupancy
// (the f32 and plan-order kernels need 34 to 48, which leaves room for 5 or 6 blocks an SM,
// not 8), and a grid-stride loop launched with more blocks than fit runs its last ones as a late
// second wave.
template <class... Params>
unsigned resident_grid(void (*kernel)(Params...), std::size_t shared) {
  static std::map<const void*, unsigned> grids;
  const auto found = grids.find(reinterpret_cast<const void*>(kernel));
  if (found != grids.end()) return found->second;
  int device = 0, sms = 0, per_sm = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  if (shared > (48 << 10))
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
          "cudaFuncSetAttribute");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, atomic_threads, shared),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return grids[reinterpret_cast<const void*>(kernel)] = static_cast<unsigned>(sms * (per_sm > 0 ? per_sm : 1));
}

// The bench kernels' launches are programmatic dependent ones on sm_90+, as the library's are,
// but inside a plain_launches() call (its rows "..., plain launches").
bool plain_peer_launches = false;

// Launches at most max_blocks blocks (and max_finish_slots), and no more than one wave
// (resident_grid), with `shared` bytes of dynamic shared memory each.
template <class... Params, class... Args>
unsigned launch_atomic(void (*kernel)(Params...), std::size_t max_blocks, std::size_t shared, cudaStream_t stream,
                       Args... args) {
  static const bool dependent = [] {
    int device = 0, major = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
    return major >= 9;
  }();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(
      std::min<std::size_t>({resident_grid(kernel, shared), max_blocks, std::size_t(max_finish_slots)})));
  config.blockDim = dim3(atomic_threads);
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = dependent && !plain_peer_launches ? 1 : 0;
  check(cudaLaunchKernelEx(&config, kernel, args...), "atomic reduction launch");
  return config.gridDim.x;
}
struct AtomicState {
  double sum;
  unsigned int finished;
  unsigned int next_run;           // the dynamic staged kernel's runs handed out
  double slots[max_finish_slots];  // the ordered finish's block sums
  // --timeline: the timed kernels' stamps, Timeline::slots a CUDA block a call, for calls
  // timed_call < timed_calls (the last block of a call counts it on).
  unsigned long long* stamps;
  unsigned int timed_call, timed_calls;
};

// The timed bench kernels (template parameter `timed`; the rows above run the same kernels
// untimed) write %globaltimer (nanoseconds, the GPU's one clock for every SM) at these points,
// by lane 0 of each warp or thread 0 of each CUDA block.
constexpr int timeline_warps = atomic_threads / 32;
static_assert(timeline_warps == Timeline::warps, "a stamp a warp");
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// This CUDA block's stamps in this call, or null (untimed, or past the calls timed).
template <bool timed>
__device__ __forceinline__ unsigned long long* stamps_of(const AtomicState* state) {
  if constexpr (!timed) {
    return nullptr;
  } else {
    const unsigned call = state->timed_call;
    if (!state->stamps || call >= state->timed_calls) return nullptr;
    unsigned long long* st = state->stamps + (std::size_t(call) * gridDim.x + blockIdx.x) * Timeline::slots;
    if (threadIdx.x == 0) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      st[Timeline::sm] = sm;
    }
    return st;
  }
}
__device__ __forceinline__ void stamp(unsigned long long* st, int slot) {
  if (st) st[slot] = global_ns();
}
// A call's last block, done: the next call's stamps go to the next region.
template <bool timed>
__device__ __forceinline__ void next_timed_call(AtomicState* state) {
  if constexpr (timed)
    if (state->stamps && state->timed_call < state->timed_calls) ++state->timed_call;
}
constexpr int atomic_unroll = 4;

// The block's sum of every thread's acc goes to state->sum with atomicAdd; the last block
// writes the result and resets the state for the next call.
template <class T, bool timed = false>
__device__ void atomic_finish(double acc, AtomicState* state, T* out, unsigned long long* st = nullptr) {
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ double warp_sums[atomic_threads / 32];
  __shared__ bool last;
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    double block = 0.0;
    for (int w = 0; w < atomic_threads / 32; ++w) block += warp_sums[w];
    stamp(st, Timeline::block_sum);
    atomicAdd(&state->sum, block);
    __threadfence();
    last = atomicAdd(&state->finished, 1u) == gridDim.x - 1;
    stamp(st, Timeline::arrived);
    if (last) {
      *out = static_cast<T>(atomicAdd(&state->sum, 0.0));
      state->sum = 0.0;
      state->finished = 0;
      state->next_run = 0;
      stamp(st, Timeline::result);
      next_timed_call<timed>(state);
    }
  }
}

// The ordered finish: the finish a one-pass fixed-order reduction needs, on these kernels'
// reads. Each block stores its sum in its own slot, an acq_rel counter finds the last block,
// and that block adds the slots in block order (the library's finish: one atomic, then one
// round of loads and a block tree). Its bits are fixed for a fixed grid (not across GPUs);
// against atomic_finish it measures what the fixed order's finish costs, apart from the
// plan's reading order (docs/PERFORMANCE.md, fifteenth round).
template <class T, bool timed = false>
__device__ void ordered_finish(double acc, AtomicState* state, T* out, unsigned long long* st = nullptr) {
  __shared__ double warp_sums[atomic_threads / 32];
  __shared__ bool last;
  const auto block_sum = [&](double v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    double block = 0.0;
    if (threadIdx.x == 0)
      for (int w = 0; w < atomic_threads / 32; ++w) block += warp_sums[w];
    return block;
  };
  const double block = block_sum(acc);
  if (threadIdx.x == 0) {
    stamp(st, Timeline::block_sum);
    state->slots[blockIdx.x] = block;
    ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> finished(state->finished);
    last = finished.fetch_add(1u, ::cuda::memory_order_acq_rel) == gridDim.x - 1;
    stamp(st, Timeline::arrived);
  }
  __syncthreads();
  if (!last) return;
  // Every slot's load in flight at once (a loop of dependent adds issued them one round trip
  // at a time: 1.0-1.6 us on a grid of 792-1584 blocks, H200), then the adds in slot order.
  constexpr int per_thread = max_finish_slots / atomic_threads;
  double slot[per_thread];
#pragma unroll
  for (int i = 0; i < per_thread; ++i) {
    const unsigned b = threadIdx.x + static_cast<unsigned>(i) * atomic_threads;
    slot[i] = b < gridDim.x ? __ldcg(&state->slots[b]) : 0.0;
  }
  double v = 0.0;
#pragma unroll
  for (int i = 0; i < per_thread; ++i) v += slot[i];
  __syncthreads();  // warp_sums is reused
  const double total = block_sum(v);
  if (threadIdx.x == 0) {
    *out = static_cast<T>(total);
    state->finished = 0;
    state->next_run = 0;
    stamp(st, Timeline::result);
    next_timed_call<timed>(state);
  }
}

// The ordered finish in one warp, for grids of at most 256 blocks (the staged bench kernel's, one
// block an SM): the block's sum as atomic_finish takes it, its slot and the acq_rel counter by
// thread 0, then warp 0 of the last block alone loads every slot (8 a lane, all in flight), adds
// its lane's slots in a pairwise tree in registers and the lanes' sums by shuffles, no barrier
// after the counter. The same fixed order for a fixed grid; against ordered_finish, what a
// block-wide tree and its barriers add to the last block's chain.
constexpr unsigned warp_finish_slots = 256;
template <class T, bool timed = false>
__device__ void warp_ordered_finish(double acc, AtomicState* state, T* out, unsigned long long* st = nullptr) {
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ double warp_sums[atomic_threads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  bool last = false;
  if (threadIdx.x == 0) {
    double block = 0.0;
    for (int w = 0; w < atomic_threads / 32; ++w) block += warp_sums[w];
    stamp(st, Timeline::block_sum);
    state->slots[blockIdx.x] = block;
    ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> finished(state->finished);
    last = finished.fetch_add(1u, ::cuda::memory_order_acq_rel) == gridDim.x - 1;
    stamp(st, Timeline::arrived);
  }
  if (!__shfl_sync(0xffffffffu, last, 0)) return;
  // Lane l takes slots l, l + 32, ...: its loads issued before any add.
  constexpr int per_lane = warp_finish_slots / 32;
  double v[per_lane];
#pragma unroll
  for (int i = 0; i < per_lane; ++i) {
    const unsigned b = threadIdx.x + static_cast<unsigned>(i) * 32;
    v[i] = b < gridDim.x ? __ldcg(&state->slots[b]) : 0.0;
  }
#pragma unroll
  for (int h = per_lane / 2; h >= 1; h /= 2)
#pragma unroll
    for (int i = 0; i < h; ++i) v[i] += v[i + h];
  double total = v[0];
  for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
  if (threadIdx.x == 0) {
    *out = static_cast<T>(total);
    state->finished = 0;
    state->next_run = 0;
    stamp(st, Timeline::result);
    next_timed_call<timed>(state);
  }
}

enum class Finish { atomic, ordered, warp_ordered };
template <Finish finish, bool timed = false, class T>
__device__ __forceinline__ void finish_with(double acc, AtomicState* state, T* out, unsigned long long* st = nullptr) {
  if constexpr (finish == Finish::atomic) atomic_finish<T, timed>(acc, state, out, st);
  else if constexpr (finish == Finish::ordered) ordered_finish<T, timed>(acc, state, out, st);
  else warp_ordered_finish<T, timed>(acc, state, out, st);
}

template <class T, bool dot, int unroll = atomic_unroll, Finish finish = Finish::atomic, bool timed = false>
__global__ void __launch_bounds__(atomic_threads)
    atomic_reduce(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, AtomicState* state, T* out) {
  wait_for_previous_grid();
  unsigned long long* const st = stamps_of<timed>(state);
  if (threadIdx.x % 32 == 0) stamp(st, Timeline::warp_start + threadIdx.x / 32);
  using Vec = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
  constexpr int per = static_cast<int>(sizeof(Vec) / sizeof(T));
  const std::size_t vectors = n / per;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double acc = 0.0;
  const auto* xv = reinterpret_cast<const Vec*>(x);
  const auto* yv = reinterpret_cast<const Vec*>(y);
  const auto term = [](const Vec& a, const Vec& b) {
    const T* pa = reinterpret_cast<const T*>(&a);
    const T* pb = reinterpret_cast<const T*>(&b);
    double t = 0.0;
#pragma unroll
    for (int k = 0; k < per; ++k) t += dot ? static_cast<double>(pa[k]) * static_cast<double>(pb[k]) : static_cast<double>(pa[k]);
    return t;
  };
#pragma unroll 1
  for (; i + (unroll - 1) * stride < vectors; i += unroll * stride) {
    Vec a[unroll], b[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      a[u] = __ldg(xv + i + u * stride);
      if (dot) b[u] = __ldg(yv + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < unroll; ++u) acc += term(a[u], b[u]);
  }
  for (; i < vectors; i += stride) acc += term(__ldg(xv + i), dot ? __ldg(yv + i) : Vec{});
  const std::size_t tail = vectors * per + blockIdx.x * blockDim.x + threadIdx.x;
  if (tail < n) acc += dot ? static_cast<double>(x[tail]) * static_cast<double>(y[tail]) : static_cast<double>(x[tail]);
  if constexpr (timed) {
    __syncwarp();
    if (threadIdx.x % 32 == 0) stamp(st, Timeline::warp_done + threadIdx.x / 32);
  }
  finish_with<finish, timed>(acc, state, out, st);
}

// "atomic, plan order": the same, but each thread reads the elements the library's kernel
// gives it (its default f32 4x8 / f64 2x8 shapes: V = 16 / sizeof(T) plan lanes per thread,
// the warp on V plan blocks of 2048 elements at once, 8 rows in flight, one warp-wide
// quad of blocks after another in grid-stride order): what the plan's element order costs
// without its tree. Sizes that are a multiple of V plan blocks only (the benchmark's).
template <class T, bool dot>
__global__ void __launch_bounds__(atomic_threads)
    atomic_plan_order(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, AtomicState* state, T* out) {
  wait_for_previous_grid();
  using Vec = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
  constexpr int per = static_cast<int>(sizeof(Vec) / sizeof(T));
  constexpr int threads_per_row = 32 / per, rows = 64, unroll = 8;
  constexpr std::size_t block_vectors = 2048 / per;
  const int lane = threadIdx.x % 32, group = lane / threads_per_row, q = lane % threads_per_row;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  const std::size_t quads = n / (2048 * per);
  const auto* xv = reinterpret_cast<const Vec*>(x);
  const auto* yv = reinterpret_cast<const Vec*>(y);
  double acc = 0.0;
  for (std::size_t quad = static_cast<std::size_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; quad < quads;
       quad += warps) {
    const std::size_t base = (quad * per + group) * block_vectors + q;
    for (int r0 = 0; r0 < rows; r0 += unroll) {
      Vec a[unroll], b[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        a[u] = __ldg(xv + base + (r0 + u) * threads_per_row);
        if (dot) b[u] = __ldg(yv + base + (r0 + u) * threads_per_row);
      }
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        const T* pa = reinterpret_cast<const T*>(&a[u]);
        const T* pb = reinterpret_cast<const T*>(&b[u]);
#pragma unroll
        for (int k = 0; k < per; ++k)
          acc += dot ? static_cast<double>(pa[k]) * static_cast<double>(pb[k]) : static_cast<double>(pa[k]);
      }
    }
  }
  atomic_finish(acc, state, out);
}

// "atomic, staged plan order": the plan's element order (a warp on one plan block, lane j adding
// its column row by row) with the reads the grid-stride kernel makes: warps take plan blocks in
// grid-stride order, so the whole GPU reads one window of the array, and each warp's lane 0 has
// the copy engine bring its plan block into shared memory in contiguous pieces (cp.async.bulk)
// through a ring of two slots, the next piece in flight while this one is walked. A piece is
// 8 KiB of loads (64 rows of f32 for sum, 32 of f32 for dot and of f64 for sum, 16 of f64 for
// dot), 128 KiB of slots a CUDA block, one block an SM. What the plan's order costs when the reads
// are not spread over every warp's own blocks (docs/PERFORMANCE.md, tenth round). sm_90+ only.
// Its ring is a tuning: 2 slots of 8 KiB as the library's staged kernel has them, or more and
// smaller pieces ("atomic, staged plan order, 4 KiB x 4" etc.: the same or fewer bytes in flight,
// taken in finer steps).
constexpr std::size_t staged_shared_bytes(int slots, unsigned piece_bytes) {
  return std::size_t(atomic_threads / 32) * slots * piece_bytes;
}

// A lane's walk of a piece the copy engine brings into `slot`: waits for it (the barrier's
// phase), adds the lane's column row by row into acc (a dot's y rows follow x's), and leaves
// the slot to its refill once every lane has read it. sm_90+ only.
template <class T, bool dot, int rows>
__device__ __forceinline__ void walk_piece(const unsigned char* slot, unsigned long long* barrier, unsigned phase,
                                           int lane, double& acc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace bulk = ew::detail::cuda::bulk;
  bulk::wait(bulk::shared_address(barrier), phase);
  const T* a = reinterpret_cast<const T*>(slot);
  const T* b = a + rows * 32;
#pragma unroll 8
  for (int r = 0; r < rows; ++r)
    acc += dot ? static_cast<double>(a[r * 32 + lane]) * static_cast<double>(b[r * 32 + lane])
               : static_cast<double>(a[r * 32 + lane]);
  __syncwarp();  // every lane has read the slot before the copy engine refills it
#endif
}

template <class T, bool dot, Finish finish = Finish::atomic, int staged_slots = 2, unsigned staged_piece_bytes = 8 << 10,
          bool timed = false, int last_parts = 1, bool warp_major = false>
__global__ void __launch_bounds__(atomic_threads)
    atomic_staged(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, AtomicState* state, T* out) {
  wait_for_previous_grid();
  unsigned long long* const st = stamps_of<timed>(state);
  if (threadIdx.x % 32 == 0) stamp(st, Timeline::warp_start + threadIdx.x / 32);
  double acc = 0.0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace bulk = ew::detail::cuda::bulk;
  constexpr int arrays = dot ? 2 : 1;
  constexpr int rows = static_cast<int>(staged_piece_bytes / (arrays * 32 * sizeof(T)));  // per piece
  constexpr int pieces = 64 / rows;                                                        // per plan block
  static_assert(rows >= 1 && 64 % rows == 0, "whole pieces a plan block");
  constexpr unsigned array_bytes = rows * 32 * sizeof(T);
  extern __shared__ __align__(128) unsigned char staged[];
  __shared__ __align__(8) unsigned long long barriers[atomic_threads / 32][staged_slots];
  // The warp's last piece in `last_parts` parts of consecutive rows, each with a barrier of its
  // own and added as it lands (tried in the library too, not kept: docs/PERFORMANCE.md,
  // "Seventeenth round").
  __shared__ __align__(8) unsigned long long last_barriers[atomic_threads / 32][last_parts];
  constexpr int part_rows = rows / last_parts;
  static_assert(rows % last_parts == 0, "whole rows a part");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned char* ring = staged + std::size_t(warp) * staged_slots * staged_piece_bytes;
  const std::size_t blocks = n / 2048, warps = static_cast<std::size_t>(gridDim.x) * (atomic_threads / 32);
  // Plan block b goes to the warp of index b mod warps. Numbered block by block (warp_major
  // false), the warps of the first CUDA blocks take the last, partial round: at 2^24, 8192 plan
  // blocks on 1056 warps, 100 SMs read 64 plan blocks and 32 SMs 56. Numbered warp by warp
  // (warp w of block c is warp w ctas + c), that round is spread over every SM: 62 or 63 each.
  const std::size_t first = warp_major ? static_cast<std::size_t>(warp) * gridDim.x + blockIdx.x
                                       : static_cast<std::size_t>(blockIdx.x) * (atomic_threads / 32) + warp;
  // Piece k of this warp: plan block first + (k / pieces) * warps, rows (k % pieces) * rows on.
  const std::size_t count = first < blocks ? ((blocks - 1 - first) / warps + 1) * pieces : 0;
  const auto issue = [&](std::size_t k) {
    const int slot = static_cast<int>(k % staged_slots);
    const unsigned bar = bulk::shared_address(&barriers[warp][slot]);
    const std::size_t element = (first + (k / pieces) * warps) * 2048 + (k % pieces) * rows * 32;
    const unsigned dst = bulk::shared_address(ring + slot * staged_piece_bytes);
    if (last_parts > 1 && k + 1 == count) {
      constexpr unsigned part_bytes = array_bytes / last_parts;
      for (int p = 0; p < last_parts; ++p) {
        const unsigned part_bar = bulk::shared_address(&last_barriers[warp][p]);
        bulk::expect_bytes(part_bar, arrays * part_bytes);
        bulk::load(dst + p * part_bytes, x + element + p * part_rows * 32, part_bytes, part_bar);
        if (dot) bulk::load(dst + array_bytes + p * part_bytes, y + element + p * part_rows * 32, part_bytes, part_bar);
      }
      return;
    }
    bulk::expect_bytes(bar, arrays * array_bytes);
    bulk::load(dst, x + element, array_bytes, bar);
    if (dot) bulk::load(dst + array_bytes, y + element, array_bytes, bar);
  };
  if (lane == 0) {
    for (int slot = 0; slot < staged_slots; ++slot) bulk::init_barrier(bulk::shared_address(&barriers[warp][slot]));
    for (int p = 0; p < last_parts; ++p) bulk::init_barrier(bulk::shared_address(&last_barriers[warp][p]));
    bulk::fence_to_copy_engine();
    for (std::size_t k = 0; k < staged_slots && k < count; ++k) issue(k);
  }
  __syncwarp();
  for (std::size_t k = 0; k < count; ++k) {
    const int slot = static_cast<int>(k % staged_slots);
    if (last_parts > 1 && k + 1 == count) {
      const T* a = reinterpret_cast<const T*>(ring + slot * staged_piece_bytes);
      for (int p = 0; p < last_parts; ++p) {
        bulk::wait(bulk::shared_address(&last_barriers[warp][p]), 0);
        if (p + 1 == last_parts && lane == 0) stamp(st, Timeline::warp_landed + warp);
#pragma unroll
        for (int r = p * part_rows; r < (p + 1) * part_rows; ++r)
          acc += dot ? static_cast<double>(a[r * 32 + lane]) * static_cast<double>(a[(rows + r) * 32 + lane])
                     : static_cast<double>(a[r * 32 + lane]);
      }
      continue;
    }
    if constexpr (timed)
      if (k + 1 == count) {  // the warp's last piece landed (walk_piece's wait then passes at once)
        bulk::wait(bulk::shared_address(&barriers[warp][slot]), static_cast<unsigned>((k / staged_slots) & 1));
        if (lane == 0) stamp(st, Timeline::warp_landed + warp);
      }
    walk_piece<T, dot, rows>(ring + slot * staged_piece_bytes, &barriers[warp][slot],
                             static_cast<unsigned>((k / staged_slots) & 1), lane, acc);
    if (lane == 0 && k + staged_slots < count) {
      bulk::fence_to_copy_engine();
      issue(k + staged_slots);
    }
  }
  if (lane == 0) stamp(st, Timeline::warp_done + warp);
#endif
  finish_with<finish, timed>(acc, state, out, st);
}

// "atomic, staged plan order, dynamic": the same reads and adds, but the plan blocks handed
// out as the warps ask for them, in runs of `run_blocks` consecutive plan blocks: each warp's
// first run is its own (run = the warp's index, so the first copies wait for nothing), the
// later ones come from one counter (atomicAdd, issued a run ahead of need, so that its round
// trip hides behind a run's reads). Any assignment of aligned runs keeps the plan's tree, so
// the library could take its units so; this measures whether a static grid-stride deal of
// 8 KiB pieces is what the plan's reading order costs (warps or SMs reading at different
// speeds, the slowest setting the time). sm_90+ only.
template <class T, bool dot, int staged_slots = 2, unsigned staged_piece_bytes = 8 << 10, int run_blocks = 1>
__global__ void __launch_bounds__(atomic_threads)
    atomic_staged_dynamic(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, AtomicState* state, T* out) {
  wait_for_previous_grid();
  double acc = 0.0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace bulk = ew::detail::cuda::bulk;
  constexpr int arrays = dot ? 2 : 1;
  constexpr int rows = static_cast<int>(staged_piece_bytes / (arrays * 32 * sizeof(T)));  // per piece
  constexpr int pieces = 64 / rows * run_blocks;                                           // per run
  static_assert(rows >= 1 && 64 % rows == 0, "whole pieces a plan block");
  static_assert(staged_slots <= 32, "a bit a slot");
  constexpr unsigned array_bytes = rows * 32 * sizeof(T);
  extern __shared__ __align__(128) unsigned char staged[];
  __shared__ __align__(8) unsigned long long barriers[atomic_threads / 32][staged_slots];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned char* ring = staged + std::size_t(warp) * staged_slots * staged_piece_bytes;
  const unsigned runs = static_cast<unsigned>(n / (2048 * run_blocks));
  const unsigned warps = gridDim.x * (atomic_threads / 32);
  // Lane 0's state: the run being issued and the piece within it, and the next dynamic run
  // (grabbed a run or more before it is needed); `issued`: bit i set when piece k + i of the
  // loop below is in its slot's flight. The warp's first `fixed` runs are its own (the first
  // fill of the ring and one run more wait for no counter), the counter hands out the rest.
  constexpr unsigned fixed = staged_slots / pieces + 1;
  const unsigned own = blockIdx.x * (atomic_threads / 32) + warp;
  unsigned run = own, next = 0, issued = 0, taken = 1;
  int piece = 0;
  if (lane == 0 && run < runs) next = fixed * warps + atomicAdd(&state->next_run, 1u);
  const auto issue = [&](int slot) {
    if (run >= runs) return false;
    const unsigned bar = bulk::shared_address(&barriers[warp][slot]);
    const std::size_t element = std::size_t(run) * 2048 * run_blocks + std::size_t(piece) * rows * 32;
    const unsigned dst = bulk::shared_address(ring + slot * staged_piece_bytes);
    bulk::fence_to_copy_engine();
    bulk::expect_bytes(bar, arrays * array_bytes);
    bulk::load(dst, x + element, array_bytes, bar);
    if (dot) bulk::load(dst + array_bytes, y + element, array_bytes, bar);
    if (++piece == pieces) {
      piece = 0;
      if (taken < fixed) {
        run = own + taken++ * warps;
      } else {
        run = next;
        if (run < runs) next = fixed * warps + atomicAdd(&state->next_run, 1u);
      }
    }
    return true;
  };
  if (lane == 0) {
    for (int slot = 0; slot < staged_slots; ++slot) bulk::init_barrier(bulk::shared_address(&barriers[warp][slot]));
    for (int slot = 0; slot < staged_slots; ++slot)
      if (issue(slot)) issued |= 1u << slot;
  }
  __syncwarp();
  for (std::size_t k = 0;; ++k) {
    if (!(__shfl_sync(0xffffffffu, issued, 0) & 1u)) break;
    const int slot = static_cast<int>(k % staged_slots);
    walk_piece<T, dot, rows>(ring + slot * staged_piece_bytes, &barriers[warp][slot],
                             static_cast<unsigned>((k / staged_slots) & 1), lane, acc);
    if (lane == 0) {
      issued >>= 1;
      if (issue(slot)) issued |= 1u << (staged_slots - 1);
    }
  }
#endif
  atomic_finish(acc, state, out);
}

AtomicState* atomic_state() {
  static AtomicState* state = [] {
    AtomicState* s = nullptr;
    check(cudaMalloc(&s, sizeof(AtomicState)), "cudaMalloc");
    check(cudaMemset(s, 0, sizeof(AtomicState)), "cudaMemset");
    return s;
  }();
  return state;
}

bool atomic_supports(Reduction r, DType d, std::size_t) { return r != Reduction::norm2 && !is_storage16(d); }
bool plan_order_supports(Reduction r, DType d, std::size_t n) {
  return atomic_supports(r, d, n) && n % (std::size_t(2048) * (16 / size_of(d))) == 0;
}
void plan_order_enqueue(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const std::size_t grid = ~std::size_t(0);  // one wave
  if (d == DType::f32) {
    const auto* xf = static_cast<const float*>(x);
    const auto* yf = static_cast<const float*>(y);
    if (r == Reduction::dot) launch_atomic(atomic_plan_order<float, true>, grid, 0, s, xf, yf, n, atomic_state(), static_cast<float*>(result));
    else launch_atomic(atomic_plan_order<float, false>, grid, 0, s, xf, xf, n, atomic_state(), static_cast<float*>(result));
  } else {
    const auto* xd = static_cast<const double*>(x);
    const auto* yd = static_cast<const double*>(y);
    if (r == Reduction::dot) launch_atomic(atomic_plan_order<double, true>, grid, 0, s, xd, yd, n, atomic_state(), static_cast<double*>(result));
    else launch_atomic(atomic_plan_order<double, false>, grid, 0, s, xd, xd, n, atomic_state(), static_cast<double*>(result));
  }
}
bool staged_supports(Reduction r, DType d, std::size_t n) {
  static const bool sm90 = [] {
    int device = 0, major = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
    return major >= 9;
  }();
  return sm90 && atomic_supports(r, d, n) && n % 2048 == 0;  // whole plan blocks (the benchmark's sizes)
}
// Calls launch(x, y, out, dot) with the operands as the dtype's pointers and dot as
// std::integral_constant<bool, ...>: one dispatch for the enqueues of the staged bench kernels.
template <class Launch>
void with_operands(Reduction r, DType d, const void* x, const void* y, void* result, Launch launch) {
  const bool dot = r == Reduction::dot;
  if (d == DType::f32) {
    const auto* xf = static_cast<const float*>(x);
    const auto* yf = dot ? static_cast<const float*>(y) : xf;
    if (dot) launch(xf, yf, static_cast<float*>(result), std::true_type{});
    else launch(xf, yf, static_cast<float*>(result), std::false_type{});
  } else {
    const auto* xd = static_cast<const double*>(x);
    const auto* yd = dot ? static_cast<const double*>(y) : xd;
    if (dot) launch(xd, yd, static_cast<double*>(result), std::true_type{});
    else launch(xd, yd, static_cast<double*>(result), std::false_type{});
  }
}
// One CUDA block an SM whatever the ring (a smaller ring would fit more): 8 warps an SM, each
// with its ring's pieces in flight.
std::size_t staged_grid() {
  static const std::size_t grid = [] {
    int device = 0, sms = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    if (static_cast<unsigned>(sms) > warp_finish_slots)
      throw std::runtime_error("staged bench kernels: more SMs than the one-warp finish's slots");
    return static_cast<std::size_t>(sms);
  }();
  return grid;
}
template <Finish finish, int slots = 2, unsigned piece_bytes = 8 << 10, int last_parts = 1, bool warp_major = false>
void staged_enqueue(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  with_operands(r, d, x, y, result, [&](const auto* xt, const auto* yt, auto* out, auto dot) {
    using T = std::remove_pointer_t<decltype(out)>;
    launch_atomic(atomic_staged<T, decltype(dot)::value, finish, slots, piece_bytes, false, last_parts, warp_major>, staged_grid(),
                  staged_shared_bytes(slots, piece_bytes), static_cast<cudaStream_t>(stream), xt, yt, n,
                  atomic_state(), out);
  });
}
template <int slots, unsigned piece_bytes, int run_blocks>
void staged_dynamic_enqueue(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  with_operands(r, d, x, y, result, [&](const auto* xt, const auto* yt, auto* out, auto dot) {
    using T = std::remove_pointer_t<decltype(out)>;
    launch_atomic(atomic_staged_dynamic<T, decltype(dot)::value, slots, piece_bytes, run_blocks>, staged_grid(),
                  staged_shared_bytes(slots, piece_bytes), static_cast<cudaStream_t>(stream), xt, yt, n,
                  atomic_state(), out);
  });
}
bool staged_dynamic_supports(Reduction r, DType d, std::size_t n) {
  return staged_supports(r, d, n) && n % (std::size_t(2048) * 2) == 0 && n / 2048 < (std::size_t(1) << 31);
}
template <int unroll, Finish finish = Finish::atomic>
void atomic_enqueue_with(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  // Small sizes take fewer blocks (a block per 4096 elements at least).
  const std::size_t grid = (n + 4095) / 4096 + 1;
  if (d == DType::f32) {
    const auto* xf = static_cast<const float*>(x);
    const auto* yf = static_cast<const float*>(y);
    if (r == Reduction::dot) launch_atomic(atomic_reduce<float, true, unroll, finish>, grid, 0, s, xf, yf, n, atomic_state(), static_cast<float*>(result));
    else launch_atomic(atomic_reduce<float, false, unroll, finish>, grid, 0, s, xf, xf, n, atomic_state(), static_cast<float*>(result));
  } else {
    const auto* xd = static_cast<const double*>(x);
    const auto* yd = static_cast<const double*>(y);
    if (r == Reduction::dot) launch_atomic(atomic_reduce<double, true, unroll, finish>, grid, 0, s, xd, yd, n, atomic_state(), static_cast<double*>(result));
    else launch_atomic(atomic_reduce<double, false, unroll, finish>, grid, 0, s, xd, xd, n, atomic_state(), static_cast<double*>(result));
  }
}
void atomic_enqueue(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  atomic_enqueue_with<atomic_unroll>(r, d, n, x, y, result, stream);
}
// A bench kernel's enqueue with plain launches: what the launch overlap gives each kernel
// (beside the library's "(plain launches)" row).
template <void (*enqueue)(Reduction, DType, std::size_t, const void*, const void*, void*, void*)>
void plain_launches(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  plain_peer_launches = true;
  enqueue(r, d, n, x, y, result, stream);
  plain_peer_launches = false;
}
void ordered_enqueue(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  atomic_enqueue_with<atomic_unroll, Finish::ordered>(r, d, n, x, y, result, stream);
}
// The same kernel with fewer 16-byte loads in flight per thread (and array): 1 or 2 instead of
// 4, so a quarter or a half of its bytes in flight per SM in f64, a third or two thirds in f32
// (whose 4-load kernels fit 6 blocks an SM, these 8), for comparing with the library's kernel
// at the bytes in flight its registers allow (--device-result, --sweep).
void atomic_enqueue_1(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  atomic_enqueue_with<1>(r, d, n, x, y, result, stream);
}
void atomic_enqueue_2(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result, void* stream) {
  atomic_enqueue_with<2>(r, d, n, x, y, result, stream);
}

// The expression reductions: TransformReduce over the indices with the expression as the
// functor (the form of the dot above), accumulating in the data's type; 16-bit data widened
// to float and computed in float.
__device__ inline float widen(__half v) { return __half2float(v); }
__device__ inline float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float widen(float v) { return v; }
__device__ inline double widen(double v) { return v; }
template <class S, class Acc>
struct SquaredDifference {
  const S* a;
  const S* b;
  __device__ Acc operator()(long long i) const {
    const Acc d = static_cast<Acc>(widen(a[i])) - static_cast<Acc>(widen(b[i]));
    return d * d;
  }
};
template <class S, class Acc>
struct AbsProduct {
  const S* a;
  const S* b;
  __device__ Acc operator()(long long i) const { return fabs(static_cast<Acc>(widen(a[i])) * static_cast<Acc>(widen(b[i]))); }
};

template <class S, class Acc>
double cub_expr_typed(ExprReduction r, std::size_t n, const S* a, const S* b, cudaStream_t stream) {
  Scratch& s = scratch();
  s.reserve(0);
  Acc* out = reinterpret_cast<Acc*>(s.out);
  const auto count = static_cast<long long>(n);
  std::size_t bytes = 0;
  const auto run = [&](void* temp) {
    const thrust::counting_iterator<long long> index(0);
    if (r == ExprReduction::sum_sq_diff)
      return cub::DeviceReduce::TransformReduce(temp, bytes, index, out, count, ::cuda::std::plus<>{},
                                                SquaredDifference<S, Acc>{a, b}, Acc(0), stream);
    return cub::DeviceReduce::TransformReduce(temp, bytes, index, out, count, ::cuda::std::plus<>{},
                                              AbsProduct<S, Acc>{a, b}, Acc(0), stream);
  };
  check(run(nullptr), "cub::DeviceReduce::TransformReduce");
  s.reserve(bytes);
  check(run(s.temp), "cub::DeviceReduce::TransformReduce");
  Acc host{};
  check(cudaMemcpyAsync(&host, out, sizeof(Acc), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return static_cast<double>(host);
}

bool cub_expr_supports(ExprReduction, DType, std::size_t) { return true; }
double cub_expr_run(ExprReduction r, DType d, std::size_t n, const void* a, const void* b, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (d) {
    case DType::f16:
      return cub_expr_typed<__half, float>(r, n, static_cast<const __half*>(a), static_cast<const __half*>(b), s);
    case DType::bf16:
      return cub_expr_typed<__nv_bfloat16, float>(r, n, static_cast<const __nv_bfloat16*>(a),
                                                  static_cast<const __nv_bfloat16*>(b), s);
    case DType::f32:
      return cub_expr_typed<float, float>(r, n, static_cast<const float*>(a), static_cast<const float*>(b), s);
    default:
      return cub_expr_typed<double, double>(r, n, static_cast<const double*>(a), static_cast<const double*>(b), s);
  }
}

}  // namespace

std::vector<ExprReducePeer> cuda_expr_reduce_peers() {
  return {{"cub TransformReduce", &cub_expr_supports, &cub_expr_run}};
}

std::vector<DeviceReducePeer> cuda_reduce_device_peers() {
  return {{"cub::DeviceReduce", false, &cub_supports, &cub_enqueue},
          {"cublas dot/nrm2", false, &cublas_supports, &cublas_enqueue},
          {"atomic (not reproducible)", false, &atomic_supports, &atomic_enqueue},
          {"atomic, plan order", false, &plan_order_supports, &plan_order_enqueue},
          {"atomic, staged plan order", false, &staged_supports, &staged_enqueue<Finish::atomic>},
          {"atomic, staged plan order, 4 KiB x 4", false, &staged_supports, &staged_enqueue<Finish::atomic, 4, 4 << 10>},
          {"atomic, staged plan order, 2 KiB x 8", false, &staged_supports, &staged_enqueue<Finish::atomic, 8, 2 << 10>},
          {"atomic, staged plan order, 4 KiB x 2", false, &staged_supports, &staged_enqueue<Finish::atomic, 2, 4 << 10>},
          {"atomic, staged plan order, last piece in 8", false, &staged_supports, &staged_enqueue<Finish::atomic, 2, 8 << 10, 8>},
          {"atomic, staged plan order, last piece in 4", false, &staged_supports, &staged_enqueue<Finish::atomic, 2, 8 << 10, 4>},
          {"atomic, staged plan order, warp-major deal", false, &staged_supports, &staged_enqueue<Finish::atomic, 2, 8 << 10, 1, true>},
          {"atomic, staged plan order, 8 KiB x 1", false, &staged_supports, &staged_enqueue<Finish::atomic, 1, 8 << 10>},
          {"atomic, staged plan order, 8 KiB x 1, warp-major deal", false, &staged_supports, &staged_enqueue<Finish::atomic, 1, 8 << 10, 1, true>},
          {"atomic, staged plan order, dynamic", false, &staged_dynamic_supports, &staged_dynamic_enqueue<2, 8 << 10, 1>},
          {"atomic, staged plan order, dynamic runs of 2", false, &staged_dynamic_supports, &staged_dynamic_enqueue<2, 8 << 10, 2>},
          {"atomic, staged plan order, 4 KiB x 4, dynamic", false, &staged_dynamic_supports, &staged_dynamic_enqueue<4, 4 << 10, 1>},
          {"ordered finish", false, &atomic_supports, &ordered_enqueue},
          {"atomic, plain launches", false, &atomic_supports, &plain_launches<&atomic_enqueue>},
          {"atomic, staged plan order, plain launches", false, &staged_supports, &plain_launches<&staged_enqueue<Finish::atomic>>},
          {"ordered finish, staged plan order", false, &staged_supports, &staged_enqueue<Finish::ordered>},
          {"ordered finish in one warp, staged plan order", false, &staged_supports, &staged_enqueue<Finish::warp_ordered>},
          {"atomic, 2 loads", false, &atomic_supports, &atomic_enqueue_2},
          {"atomic, 1 load", false, &atomic_supports, &atomic_enqueue_1}};
}

namespace {
// The timed forms of the grid-stride and staged bench kernels, enqueued as their rows are; the
// grid launched is returned.
using TimedEnqueue = unsigned (*)(Reduction, DType, std::size_t, const void*, const void*, void*, cudaStream_t);
template <Finish finish>
unsigned timed_grid_stride(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result,
                           cudaStream_t stream) {
  unsigned grid = 0;
  with_operands(r, d, x, y, result, [&](const auto* xt, const auto* yt, auto* out, auto dot) {
    using T = std::remove_pointer_t<decltype(out)>;
    grid = launch_atomic(atomic_reduce<T, decltype(dot)::value, atomic_unroll, finish, true>, (n + 4095) / 4096 + 1, 0,
                         stream, xt, yt, n, atomic_state(), out);
  });
  return grid;
}
template <Finish finish, int slots, unsigned piece_bytes, int last_parts = 1, bool warp_major = false>
unsigned timed_staged(Reduction r, DType d, std::size_t n, const void* x, const void* y, void* result,
                      cudaStream_t stream) {
  unsigned grid = 0;
  with_operands(r, d, x, y, result, [&](const auto* xt, const auto* yt, auto* out, auto dot) {
    using T = std::remove_pointer_t<decltype(out)>;
    grid = launch_atomic(atomic_staged<T, decltype(dot)::value, finish, slots, piece_bytes, true, last_parts, warp_major>,
                         staged_grid(),
                         staged_shared_bytes(slots, piece_bytes), stream, xt, yt, n, atomic_state(), out);
  });
  return grid;
}
const std::vector<std::pair<std::string, TimedEnqueue>>& timed_kernels() {
  static const std::vector<std::pair<std::string, TimedEnqueue>> kernels = {
      {"atomic (not reproducible)", &timed_grid_stride<Finish::atomic>},
      {"ordered finish", &timed_grid_stride<Finish::ordered>},
      {"atomic, staged plan order", &timed_staged<Finish::atomic, 2, 8 << 10>},
      {"ordered finish, staged plan order", &timed_staged<Finish::ordered, 2, 8 << 10>},
      {"ordered finish in one warp, staged plan order", &timed_staged<Finish::warp_ordered, 2, 8 << 10>},
      {"atomic, staged plan order, 4 KiB x 4", &timed_staged<Finish::atomic, 4, 4 << 10>},
      {"atomic, staged plan order, 8 KiB x 1", &timed_staged<Finish::atomic, 1, 8 << 10>},
      {"atomic, staged plan order, last piece in 8", &timed_staged<Finish::atomic, 2, 8 << 10, 8>},
      {"atomic, staged plan order, 8 KiB x 1, last piece in 8", &timed_staged<Finish::atomic, 1, 8 << 10, 8>},
      {"atomic, staged plan order, warp-major deal", &timed_staged<Finish::atomic, 2, 8 << 10, 1, true>},
      {"atomic, staged plan order, 8 KiB x 1, warp-major deal", &timed_staged<Finish::atomic, 1, 8 << 10, 1, true>}};
  return kernels;
}
// AtomicState's timeline fields, set from the host in one copy.
struct TimelineFields {
  unsigned long long* stamps;
  unsigned int timed_call, timed_calls;
};
static_assert(offsetof(AtomicState, timed_call) - offsetof(AtomicState, stamps) == offsetof(TimelineFields, timed_call) &&
                  offsetof(AtomicState, timed_calls) - offsetof(AtomicState, stamps) == offsetof(TimelineFields, timed_calls),
              "one copy sets the timeline's fields");
void set_timeline(const TimelineFields& f) {
  check(cudaMemcpy(&atomic_state()->stamps, &f, sizeof(f), cudaMemcpyHostToDevice), "cudaMemcpy");
}
}  // namespace

std::vector<std::string> cuda_reduce_timeline_kernels() {
  std::vector<std::string> names;
  for (const auto& k : timed_kernels()) names.push_back(k.first);
  return names;
}

Timeline cuda_reduce_timeline(const std::string& kernel, Reduction r, DType d, std::size_t n, const void* x,
                              const void* y, void* result, void* stream, int calls) {
  const auto s = static_cast<cudaStream_t>(stream);
  const auto found = std::find_if(timed_kernels().begin(), timed_kernels().end(),
                                  [&](const auto& k) { return k.first == kernel; });
  if (found == timed_kernels().end()) throw std::invalid_argument("no timed bench kernel " + kernel);
  if (!(kernel.find("staged") == std::string::npos ? atomic_supports(r, d, n) : staged_supports(r, d, n)))
    throw std::invalid_argument(kernel + ": not for this reduction, dtype and size");
  Timeline t;
  for (int i = 0; i < 3; ++i) t.ctas = found->second(r, d, n, x, y, result, s);  // untimed: no stamps set
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  t.calls = calls;
  t.stamps.assign(std::size_t(calls) * t.ctas * Timeline::slots, 0);
  unsigned long long* stamps = nullptr;
  check(cudaMalloc(&stamps, t.stamps.size() * sizeof(unsigned long long)), "cudaMalloc");
  check(cudaMemset(stamps, 0, t.stamps.size() * sizeof(unsigned long long)), "cudaMemset");
  set_timeline({stamps, 0, static_cast<unsigned>(calls)});
  for (int i = 0; i < calls; ++i) found->second(r, d, n, x, y, result, s);
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  check(cudaMemcpy(t.stamps.data(), stamps, t.stamps.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  set_timeline({nullptr, 0, 0});
  check(cudaFree(stamps), "cudaFree");
  return t;
}

namespace {
// cub's outputs side by side in device memory, so that one copy brings both back.
template <class T>
struct ValueAndIndex {
  T value;
  long long index;
};

template <class T>
ValueIndex cub_extremum_typed(bool is_min, std::size_t n, const T* x, cudaStream_t stream) {
  Scratch& s = scratch();
  static ValueAndIndex<T>* device = nullptr;
  static ValueAndIndex<T>* host = nullptr;
  if (!device) check(cudaMalloc(&device, sizeof(*device)), "cudaMalloc");
  if (!host) check(cudaMallocHost(&host, sizeof(*host)), "cudaMallocHost");
  const auto count = static_cast<::cuda::std::int64_t>(n);
  std::size_t bytes = 0;
  const auto run = [&](void* temp) {
    return is_min ? cub::DeviceReduce::ArgMin(temp, bytes, x, &device->value, &device->index, count, stream)
                  : cub::DeviceReduce::ArgMax(temp, bytes, x, &device->value, &device->index, count, stream);
  };
  check(run(nullptr), "cub::DeviceReduce::ArgMin/ArgMax");
  s.reserve(bytes);
  check(run(s.temp), "cub::DeviceReduce::ArgMin/ArgMax");
  check(cudaMemcpyAsync(host, device, sizeof(*host), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return {static_cast<double>(host->value), static_cast<std::size_t>(host->index)};
}
}  // namespace

ValueIndex cub_extremum(bool is_min, DType dtype, std::size_t n, const void* x, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  if (dtype == DType::f32) return cub_extremum_typed(is_min, n, static_cast<const float*>(x), st);
  if (dtype == DType::f64) return cub_extremum_typed(is_min, n, static_cast<const double*>(x), st);
  throw std::invalid_argument("cub_extremum: f32 and f64 only");
}

std::vector<ReducePeer> cuda_reduce_peers() {
  return {{"cub::DeviceReduce", true, &cub_supports, &cub_run}, {"cublas dot/nrm2", true, &cublas_supports, &cublas_run}};
}

}  // namespace ew::bench
