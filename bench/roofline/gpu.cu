// The GPU side of ew-roofline: ceilings measured with bench kernels (not the
// library's), CUDA-event timing, and the arithmetic-intensity probe.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <new>
#include <stdexcept>
#include <string>

#include "gpu.hpp"

namespace ew::roofline::gpu {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                                                 cudaGetErrorString(e) + ")");
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

cudaStream_t bench_stream() {
  static cudaStream_t s = [] {
    cudaStream_t st;
    check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
    return st;
  }();
  return s;
}

__device__ __host__ inline std::uint64_t mix(std::uint64_t i, unsigned seed) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (std::uint64_t(seed) << 32);
  x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
  return x;
}

// Floats in [1, 2) whose 16-bit halves are also normal numbers in [1/128, 2) as f16 and as
// bf16 (the host's fill, cpu_probe.cpp): arenas filled as f32 serve the 16-bit dtypes
// without infinities, NaNs or subnormals.
__global__ void fill_f32(std::uint32_t* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(i, seed);
    p[i] = 0x3F800000u | std::uint32_t(h >> 57) << 16 | 0x3C00u | std::uint32_t((h >> 40) & 0x3FFu);
  }
}
__global__ void fill_f64(std::uint64_t* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = 0x3FF0000000000000ull | (mix(i, seed) >> 12);
}

// Bandwidth kernels: float4 accesses, four independent 16-byte loads per thread and
// iteration, a grid of a full wave of resident blocks. n4 is a multiple of 4 * grid size.
constexpr int threads = 256, unroll = 4;

// `passes` times over the same range: with a range that fits in L2 one launch then
// runs long enough that launch overhead does not hide the cache's bandwidth. For L2,
// loads bypass L1 (__ldcg): each SM re-reads its own addresses every pass, which would
// otherwise come from L1 and measure L1 instead.
template <bool l2_only>
__global__ void read_kernel(const float4* __restrict__ a, std::size_t n4, float* __restrict__ out, int passes = 1) {
  float acc = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4; i += unroll * stride) {
      float4 v[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) v[u] = l2_only ? __ldcg(a + i + u * stride) : a[i + u * stride];
#pragma unroll
      for (int u = 0; u < unroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  if (acc == -1.0f) out[0] = acc;  // never true for our data; keeps the loads alive
}

// Count arrays read at the same offsets in one pass, nothing written: how fast a call that
// reads as many bytes runs at that size, for reference (read_pass). Every array's next
// `unroll` strides are loaded before their adds: 4 x Count 16-byte loads in flight a thread,
// where the read ceiling's kernel keeps 4.
struct ReadArrays {
  const float4* a[max_read_arrays];
};
template <int Count>
__global__ void read_arrays_kernel(ReadArrays r, std::size_t n4, float* __restrict__ out) {
  float acc = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4; i += unroll * stride) {
    float4 v[unroll][Count];
#pragma unroll
    for (int u = 0; u < unroll; ++u)
#pragma unroll
      for (int k = 0; k < Count; ++k) v[u][k] = i + u * stride < n4 ? r.a[k][i + u * stride] : float4{0, 0, 0, 0};
#pragma unroll
    for (int u = 0; u < unroll; ++u)
#pragma unroll
      for (int k = 0; k < Count; ++k) acc += v[u][k].x + v[u][k].y + v[u][k].z + v[u][k].w;
  }
  if (acc == -1.0f) out[0] = acc;  // keeps the loads alive; true for no data measured (f64 read as floats: by chance)
}

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ c, std::size_t n4) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4; i += unroll * stride) {
    float4 v[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) v[u] = a[i + u * stride];
#pragma unroll
    for (int u = 0; u < unroll; ++u) c[i + u * stride] = v[u];
  }
}

__global__ void triad_kernel(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c,
                             std::size_t n4) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4; i += unroll * stride) {
    float4 x[unroll], y[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) x[u] = a[i + u * stride], y[u] = b[i + u * stride];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      float4 r{fmaf(0.5f, y[u].x, x[u].x), fmaf(0.5f, y[u].y, x[u].y), fmaf(0.5f, y[u].z, x[u].z),
               fmaf(0.5f, y[u].w, x[u].w)};
      c[i + u * stride] = r;
    }
  }
}

// Independent FMA chains per thread, no memory traffic; v*a + b converges, no overflow.
template <class T, int chains>
__global__ void fma_kernel(int iterations, T* out) {
  T v[chains];
#pragma unroll
  for (int c = 0; c < chains; ++c) v[c] = T(1) + T(threadIdx.x + c) * T(1e-3);
  const T a = T(0.999), b = T(1e-3);
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < chains; ++c) v[c] = fma(v[c], a, b);
  T s = 0;
#pragma unroll
  for (int c = 0; c < chains; ++c) s += v[c];
  if (s == T(-1)) out[0] = s;
}

// The intensity probe: each thread carries 4 elements (4 independent chains) per step.
template <class T>
__global__ void intensity_kernel(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const T a = T(0.999), b = T(1e-3);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += 4 * stride) {
    T v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = i + u * stride < n ? x[i + u * stride] : T(0);
    for (int j = 0; j < k; ++j)
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = fma(v[u], a, b);
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (i + u * stride < n) y[i + u * stride] = v[u];
  }
}

int resident_grid(const void* kernel, int block) {
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0), "occupancy");
  return std::max(per_sm, 1) * query().sms;
}

template <class F>
Stats repeat(int reps, int calls, F launch) {
  time_on_stream([&] { launch(); });  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r)
    t.push_back(time_on_stream([&] {
                  for (int c = 0; c < calls; ++c) launch();
                }) /
                calls);
  return summarize(t);
}

}  // namespace

const Info& query() {
  static const Info info = [] {
    Info i;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      i.why = std::string("no usable CUDA driver or device: ") + cudaGetErrorName(e);
      return i;
    }
    if (count == 0) {
      i.why = "no CUDA device";
      return i;
    }
    int dev = 0;
    if (const char* env = std::getenv("EW_DEVICE")) dev = std::atoi(env);
    if (dev < 0 || dev >= count) {
      i.why = "EW_DEVICE=" + std::to_string(dev) + " but " + std::to_string(count) + " device(s)";
      return i;
    }
    check(cudaSetDevice(dev), "cudaSetDevice");
    cudaDeviceProp p;
    check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
    i.name = p.name;
    i.sms = p.multiProcessorCount;
    i.memory_bytes = p.totalGlobalMem;
    i.l2_bytes = p.l2CacheSize;
    check(cudaDeviceGetAttribute(&i.memory_clock_khz, cudaDevAttrMemoryClockRate, dev), "memory clock");
    check(cudaDeviceGetAttribute(&i.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, dev), "bus width");
    i.spec_gbps = 2.0 * i.memory_clock_khz * 1e3 * (i.bus_width_bits / 8.0) / 1e9;
    int v = 0;
    cudaDriverGetVersion(&v);
    i.driver = "CUDA " + version_string(v);
    // The kernel module's own version, where Linux shows it: the first word of
    // /proc/driver/nvidia/version made of digits and dots ("... for x86_64  580.159.04 ...").
    std::ifstream nv("/proc/driver/nvidia/version");
    std::string line;
    if (std::getline(nv, line)) {
      std::istringstream words(line);
      for (std::string w; words >> w;)
        if (w.find('.') != std::string::npos && w.find_first_not_of("0123456789.") == std::string::npos) {
          i.driver = w + " (" + i.driver + ")";
          break;
        }
    }
    cudaRuntimeGetVersion(&v);
    i.runtime = version_string(v);
    i.usable = true;
    return i;
  }();
  return info;
}

void* allocate(std::size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();
    throw std::bad_alloc();
  }
  return p;
}

void release(void* p) noexcept { cudaFree(p); }

void fill(void* p, std::size_t n, DType dtype, unsigned seed) {
  int grid = query().sms * 8;
  if (dtype == DType::f32)
    fill_f32<<<grid, threads, 0, bench_stream()>>>(static_cast<std::uint32_t*>(p), n, seed);
  else
    fill_f64<<<grid, threads, 0, bench_stream()>>>(static_cast<std::uint64_t*>(p), n, seed);
  check(cudaGetLastError(), "fill");
  synchronize();
}

void to_host(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, bench_stream()), "cudaMemcpy to host");
  synchronize();
}

void to_device(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, bench_stream()), "cudaMemcpy to device");
  synchronize();
}

void* stream() { return bench_stream(); }

template <int Count>
void read_arrays(const ReadArrays& r, std::size_t n4, float* sink) {
  static const int grid = resident_grid(reinterpret_cast<const void*>(&read_arrays_kernel<Count>), threads);
  read_arrays_kernel<Count><<<grid, threads, 0, bench_stream()>>>(r, n4, sink);
}

void read_pass(const void* const* arrays, int count, std::size_t bytes_each) {
  if (count < 1 || count > max_read_arrays)
    throw std::invalid_argument("read_pass: " + std::to_string(count) + " arrays; it reads 1 to " +
                                std::to_string(max_read_arrays));
  static float* const sink = static_cast<float*>(allocate(64));  // the process's own: nothing reads it
  ReadArrays r{};
  for (int k = 0; k < count; ++k) r.a[k] = static_cast<const float4*>(arrays[k]);
  const std::size_t n4 = (bytes_each + 15) / 16;
  switch (count) {
    case 1: read_arrays<1>(r, n4, sink); break;
    case 2: read_arrays<2>(r, n4, sink); break;
    case 3: read_arrays<3>(r, n4, sink); break;
    case 4: read_arrays<4>(r, n4, sink); break;
    case 5: read_arrays<5>(r, n4, sink); break;
    default: read_arrays<6>(r, n4, sink); break;
  }
  check(cudaGetLastError(), "read_arrays_kernel");
}

void synchronize() { check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize"); }

double time_on_stream(const std::function<void()>& body) {
  static cudaEvent_t start = nullptr, stop = nullptr;
  if (!start) {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  check(cudaEventRecord(start, bench_stream()), "cudaEventRecord");
  body();
  check(cudaEventRecord(stop, bench_stream()), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  check(cudaGetLastError(), "kernel");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  return ms * 1e-3;
}

Ceilings measure_ceilings(bool quick, int reps) {
  const Info& info = query();
  Ceilings c;
  c.place = Place::device;
  c.spec_gbps = info.spec_gbps;
  cudaStream_t s = bench_stream();

  // Device memory: three arrays of 1 GiB (512 MiB with --quick), far beyond L2.
  const int grid = resident_grid(reinterpret_cast<const void*>(&copy_kernel), threads);
  const std::size_t unit = std::size_t(grid) * threads * unroll;
  std::size_t n4 = (quick ? (std::size_t(32) << 20) : (std::size_t(64) << 20));
  n4 = std::max(n4, 4 * info.l2_bytes / 16) / unit * unit;
  float4* a = static_cast<float4*>(allocate(n4 * 16));
  float4* b = static_cast<float4*>(allocate(n4 * 16));
  float4* out = static_cast<float4*>(allocate(n4 * 16));
  fill(a, n4 * 4, DType::f32, 1), fill(b, n4 * 4, DType::f32, 2), fill(out, n4 * 4, DType::f32, 3);
  const double bytes = 16.0 * n4;
  auto add = [&](const char* kind, const char* name, double counted, Stats st) {
    c.add({kind, name, "", counted / st.min / 1e9, st});
  };
  add("memory", "read-only sum", bytes,
      repeat(reps, 1, [&] { read_kernel<false><<<grid, threads, 0, s>>>(a, n4, reinterpret_cast<float*>(out)); }));
  add("memory", "copy", 2 * bytes, repeat(reps, 1, [&] { copy_kernel<<<grid, threads, 0, s>>>(a, out, n4); }));
  add("memory", "triad", 3 * bytes, repeat(reps, 1, [&] { triad_kernel<<<grid, threads, 0, s>>>(a, b, out, n4); }));
  add("memory", "cudaMemcpy device to device", 2 * bytes, repeat(reps, 1, [&] {
        check(cudaMemcpyAsync(out, a, n4 * 16, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
      }));

  // L2: a quarter of it read 100 times over in each launch (resident after the first pass).
  std::size_t l2n4 = std::max<std::size_t>(info.l2_bytes / 4 / 16 / unit, 1) * unit;
  const int passes = 100;
  add("cache", "L2 read (all SMs)", 16.0 * l2n4 * passes,
      repeat(reps, 1, [&] { read_kernel<true><<<grid, threads, 0, s>>>(a, l2n4, reinterpret_cast<float*>(out), passes); }));
  c.cache_label = "L2";
  release(a), release(b), release(out);

  // FMA rate: 8 independent chains per thread, every SM full.
  auto fma_rate = [&](const char* dtype, auto kernel, auto* sink) {
    int g = resident_grid(reinterpret_cast<const void*>(kernel), threads);
    const int iterations = quick ? 4096 : 16384;
    Stats st = repeat(reps, 3, [&] { kernel<<<g, threads, 0, s>>>(iterations, sink); });
    double flops = 2.0 * 8 * iterations * double(g) * threads;
    c.add({"fma", std::string("independent FMA chains, ") + dtype, dtype, flops / st.min / 1e9, st});
  };
  float* fsink = static_cast<float*>(allocate(64));
  fma_rate("f32", &fma_kernel<float, 8>, fsink);
  fma_rate("f64", &fma_kernel<double, 8>, reinterpret_cast<double*>(fsink));
  release(fsink);
  return c;
}

std::vector<IntensityPoint> intensity(DType dtype, const std::vector<int>& ks, std::size_t n, int reps) {
  std::size_t es = size_of(dtype);
  void* x = allocate(n * es);
  void* y = allocate(n * es);
  fill(x, n, dtype, 5);
  cudaStream_t s = bench_stream();
  std::vector<IntensityPoint> points;
  for (int k : ks) {
    Stats st;
    if (dtype == DType::f32) {
      int g = resident_grid(reinterpret_cast<const void*>(&intensity_kernel<float>), threads);
      st = repeat(reps, 1, [&] {
        intensity_kernel<float><<<g, threads, 0, s>>>(static_cast<const float*>(x), static_cast<float*>(y), n, k);
      });
    } else {
      int g = resident_grid(reinterpret_cast<const void*>(&intensity_kernel<double>), threads);
      st = repeat(reps, 1, [&] {
        intensity_kernel<double><<<g, threads, 0, s>>>(static_cast<const double*>(x), static_cast<double*>(y), n, k);
      });
    }
    points.push_back(IntensityPoint::measured(Place::device, dtype, k, n, st));
  }
  release(x), release(y);
  return points;
}

}  // namespace ew::roofline::gpu
