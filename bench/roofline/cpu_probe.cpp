#include "cpu_probe.hpp"

#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include "cpu_kernels.hpp"
#include "ew/ew.hpp"
#include "timing.hpp"

namespace ew::roofline::cpu {

// One instance per x86-64 level (cpu_kernels.cpp compiled with EW_LEVEL).
namespace level_base { const Kernels& kernels(); }
#if defined(EW_HAVE_LEVEL_V3)
namespace level_v3 { const Kernels& kernels(); }
#endif
#if defined(EW_HAVE_LEVEL_V4)
namespace level_v4 { const Kernels& kernels(); }
#endif

const Kernels& best_kernels() {
  static const Kernels& chosen = []() -> const Kernels& {
#if defined(EW_HAVE_LEVEL_V4)
    if (__builtin_cpu_supports("x86-64-v4")) return level_v4::kernels();
#endif
#if defined(EW_HAVE_LEVEL_V3)
    if (__builtin_cpu_supports("x86-64-v3")) return level_v3::kernels();
#endif
    return level_base::kernels();
  }();
  return chosen;
}

const char* isa() { return best_kernels().isa; }

namespace {

constexpr std::size_t MiB = std::size_t(1) << 20;
constexpr std::size_t page = 4096;

std::size_t sysfs_size(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s.empty()) return 0;
  std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
  char unit = s.back();
  return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
}

// The half-open chunk [lo, hi) of n elements that thread `id` of `count` owns,
// boundaries on multiples of `grain`.
void chunk(std::size_t n, std::size_t grain, int id, int count, std::size_t& lo, std::size_t& hi) {
  std::size_t blocks = n / grain, per = blocks / count, extra = blocks % count;
  std::size_t b0 = id * per + std::min<std::size_t>(id, extra);
  lo = b0 * grain;
  hi = (b0 + per + (std::size_t(id) < extra ? 1 : 0)) * grain;
  if (id == count - 1) hi = n;
}

// Runs f(lo, count) on every thread's chunk, times the whole parallel region.
template <class F>
double parallel_seconds(std::size_t n, F f) {
  return seconds_of([&] {
#pragma omp parallel
    {
      std::size_t lo, hi;
      chunk(n, 256, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
      f(lo, hi - lo);
    }
  });
}

template <class F>
Stats repeat(int reps, F f) {
  f();  // warm-up: page mapping, thread start, frequency ramp
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) t.push_back(f());
  return summarize(t);
}

volatile double sink;

}  // namespace

void describe(Machine& m) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      m.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
  m.cpu_cores = omp_get_max_threads();
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int i = 0; i < 8; ++i) {
    std::ifstream level(base + std::to_string(i) + "/level"), type(base + std::to_string(i) + "/type");
    int lv = 0;
    std::string ty;
    if (!(level >> lv) || !(type >> ty) || ty == "Instruction") continue;
    std::size_t bytes = sysfs_size(base + std::to_string(i) + "/size");
    if (lv == 2) m.l2_bytes = bytes;
    if (lv >= 2 && bytes > 0) m.llc_bytes = bytes;  // the highest level seen last
  }
  if (m.llc_bytes == 0) m.llc_bytes = 32 * MiB;  // unknown: assume a large one, to stay cold
  if (m.l2_bytes == 0) m.l2_bytes = 512 * 1024;
}

void* host_alloc(std::size_t bytes) {
  bytes = (bytes + page - 1) / page * page;
  void* p = std::aligned_alloc(page, bytes);
  if (!p) throw std::bad_alloc();
  auto* c = static_cast<unsigned char*>(p);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < bytes; i += page) c[i] = 0;
  return p;
}

void host_free(void* p) noexcept { std::free(p); }

void host_fill(void* p, std::size_t n, DType dtype, unsigned seed) {
  auto hash = [seed](std::uint64_t i) {
    std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (std::uint64_t(seed) << 32);
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
    return x;
  };
  if (size_of(dtype) == 2) {  // f16 or bf16 in [1, 2)
    auto* h = static_cast<std::uint16_t*>(p);
    const bool f16 = dtype == DType::f16;
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i)
      h[i] = f16 ? std::uint16_t(0x3C00u | (hash(i) >> 54)) : std::uint16_t(0x3F80u | (hash(i) >> 57));
  } else if (dtype == DType::f32) {
    auto* f = static_cast<std::uint32_t*>(p);
#pragma omp parallel for schedule(static)
    // Each 16-bit half is also a normal number in [1/128, 2) as f16 and as bf16, so that
    // arenas filled as f32 serve the 16-bit dtypes without infinities or subnormals.
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t h = hash(i);
      f[i] = 0x3F800000u | std::uint32_t(h >> 57) << 16 | 0x3C00u | std::uint32_t((h >> 40) & 0x3FFu);
    }
  } else {
    auto* d = static_cast<std::uint64_t*>(p);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) d[i] = 0x3FF0000000000000ull | (hash(i) >> 12);
  }
}

Ceilings measure_ceilings(const Machine& m, bool quick, int reps) {
  const Kernels& k = best_kernels();
  Ceilings c;
  c.place = Place::host;

  // Memory: three arrays, each several times the last-level cache.
  std::size_t n = std::max((quick ? 4 : 8) * m.llc_bytes, 64 * MiB) / sizeof(float);
  n = n / 4096 * 4096;
  auto* a = static_cast<float*>(host_alloc(n * 4));
  auto* b = static_cast<float*>(host_alloc(n * 4));
  auto* out = static_cast<float*>(host_alloc(n * 4));
  host_fill(a, n, DType::f32, 1);
  host_fill(b, n, DType::f32, 2);
  host_fill(out, n, DType::f32, 3);
  auto bandwidth = [&](const char* kind, const char* name, double bytes, auto body) {
    Stats s = repeat(reps, [&] { return parallel_seconds(n, body); });
    c.add({kind, name, "", bytes / s.min / 1e9, s});
  };
  const double f = 4.0 * double(n);
  bandwidth("memory", "read-only sum", f, [&](std::size_t lo, std::size_t len) { sink = k.read_sum(a + lo, len); });
  bandwidth("memory", "copy", 2 * f, [&](std::size_t lo, std::size_t len) { k.copy(a + lo, out + lo, len); });
  bandwidth("memory", "copy, streaming stores", 2 * f,
            [&](std::size_t lo, std::size_t len) { k.copy_stream(a + lo, out + lo, len); });
  bandwidth("memory", "triad", 3 * f, [&](std::size_t lo, std::size_t len) { k.triad(a + lo, b + lo, out + lo, len); });
  bandwidth("memory", "triad, streaming stores", 3 * f,
            [&](std::size_t lo, std::size_t len) { k.triad_stream(a + lo, b + lo, out + lo, len); });
  bandwidth("memory", "write, streaming stores", f, [&](std::size_t lo, std::size_t len) { k.fill_stream(out + lo, len); });
  bandwidth("memory", "update in place", 2 * f, [&](std::size_t lo, std::size_t len) { k.update(out + lo, len); });
  // The library's own copy where Highway runs: its streaming stores are a streaming
  // kernel too, and the ceiling must not sit below what a backend shows it can do.
  if (backend_status(Backend::highway).usable) {
    Context hwy(Backend::highway);
    Stats s = repeat(reps, [&] {
      return seconds_of([&] {
        ew::copy<float>(hwy, Span<const float>(a, n, MemorySpace::host), Span<float>(out, n, MemorySpace::host));
        hwy.synchronize();
      });
    });
    c.add({"memory", "highway backend copy (ew::copy)", "", 2 * f / s.min / 1e9, s});
  }
  host_free(a), host_free(b), host_free(out);

  // Per-core L2: each thread sums its own block of half its L2, many times over.
  {
    int threads = omp_get_max_threads();
    std::size_t per = std::max<std::size_t>(m.l2_bytes / 2 / 4 / 256 * 256, 1024);
    auto* cache = static_cast<float*>(host_alloc(per * 4 * threads));
    host_fill(cache, per * threads, DType::f32, 4);
    const int passes = quick ? 200 : 1000;
    Stats s = repeat(reps, [&] {
      return seconds_of([&] {
#pragma omp parallel
        {
          const float* mine = cache + per * omp_get_thread_num();
          double acc = 0;
          for (int p = 0; p < passes; ++p) acc += k.read_sum(mine, per);
          sink = acc;
        }
      });
    });
    c.add({"cache", "L2 read (per core, all cores)", "", 4.0 * per * threads * passes / s.min / 1e9, s});
    c.cache_label = "L2 (per core)";
    host_free(cache);
  }

  // FMA rate: independent chains in registers on every thread.
  auto fma = [&](const char* dtype, double (*kernel)(std::size_t), std::size_t flops_per_iteration) {
    std::size_t iterations = 1 << 16;
    double t1 = seconds_of([&] { sink = kernel(iterations); });
    iterations = std::max<std::size_t>(iterations, std::size_t(iterations * ((quick ? 0.02 : 0.05) / t1)));
    Stats s = repeat(reps, [&] {
      return seconds_of([&] {
#pragma omp parallel
        sink = kernel(iterations);
      });
    });
    double flops = double(flops_per_iteration) * iterations * omp_get_max_threads();
    c.add({"fma", std::string("independent FMA chains, ") + dtype, dtype, flops / s.min / 1e9, s});
  };
  fma("f32", k.fma_peak_f32, k.fma_flops_per_iteration_f32);
  fma("f64", k.fma_peak_f64, k.fma_flops_per_iteration_f64);
  return c;
}

std::vector<IntensityPoint> intensity(DType dtype, const std::vector<int>& ks, std::size_t n, int reps) {
  const Kernels& k = best_kernels();
  std::size_t es = size_of(dtype);
  void* x = host_alloc(n * es);
  void* y = host_alloc(n * es);
  host_fill(x, n, dtype, 5);
  std::vector<IntensityPoint> points;
  for (int kk : ks) {
    Stats s = repeat(reps, [&] {
      return parallel_seconds(n, [&](std::size_t lo, std::size_t len) {
        if (dtype == DType::f32)
          k.intensity_f32(static_cast<const float*>(x) + lo, static_cast<float*>(y) + lo, len, kk);
        else
          k.intensity_f64(static_cast<const double*>(x) + lo, static_cast<double*>(y) + lo, len, kk);
      });
    });
    points.push_back(IntensityPoint::measured(Place::host, dtype, kk, n, s));
  }
  host_free(x), host_free(y);
  return points;
}

}  // namespace ew::roofline::cpu
