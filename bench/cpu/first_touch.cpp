// ew-first-touch: does it matter which thread first touched the arrays? On a machine of
// several NUMA nodes a page lives on the node of the thread that first wrote it, and a
// team whose pieces do not match that placement reads across the interconnect. Times
// c = a + b (f32, highway backend, all threads) and the same add as a plain OpenMP loop on
// arrays first touched (1) by one thread, (2) by an OpenMP static loop, and (3) the output
// never touched before the call (the page faults land in the first call).
// Usage: ew-first-touch [log2 n = 26] [calls = 15]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ew/ew.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

float* allocate(std::size_t n) {
  void* p = std::aligned_alloc(4096, (n * sizeof(float) + 4095) / 4096 * 4096);
  if (!p) {
    std::fprintf(stderr, "ew-first-touch: cannot allocate %zu floats\n", n);
    std::exit(1);
  }
  return static_cast<float*>(p);
}

void touch_serial(float* p, std::size_t n, float v) { std::fill(p, p + n, v); }

void touch_parallel(float* p, std::size_t n, float v) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) p[i] = v;
}

void omp_add(const float* a, const float* b, float* c, std::size_t n) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) c[i] = a[i] + b[i];
}

struct Times {
  double first, median, min, max;
};

template <class F>
Times time_calls(int calls, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < calls; ++i) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  const double first = t.front();
  t.erase(t.begin());
  std::sort(t.begin(), t.end());
  return {first, t[t.size() / 2], t.front(), t.back()};
}

int numa_nodes() {
  int nodes = 0;
  while (std::ifstream("/sys/devices/system/node/node" + std::to_string(nodes) + "/cpulist")) ++nodes;
  return nodes;
}

}  // namespace

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 26;
  const int calls = argc > 2 ? std::max(3, std::atoi(argv[2])) : 15;
  if (log2n < 10 || log2n > 32) {
    std::fprintf(stderr, "usage: ew-first-touch [log2 n, 10..32] [calls]\n");
    return 2;
  }
  const std::size_t n = std::size_t(1) << log2n;
  const double bytes = 3.0 * sizeof(float) * double(n);
  ew::Context ctx(ew::Backend::highway);
  std::printf("ew-first-touch: c = a + b, f32, n = 2^%d (%.0f MiB per array), %d OpenMP threads, %d NUMA node(s)\n",
              log2n, n * 4.0 / (1 << 20), omp_get_max_threads(), numa_nodes());
  std::printf("%-34s %-12s %12s %12s %12s %12s\n", "first touch", "code", "first call", "median GB/s", "min GB/s",
              "max GB/s");
  for (const char* placement : {"one thread", "OpenMP static loop", "output untouched before the call"}) {
    for (const char* code : {"highway", "openmp loop"}) {
      float* a = allocate(n);
      float* b = allocate(n);
      float* c = allocate(n);
      const bool parallel = std::strcmp(placement, "OpenMP static loop") == 0;
      const bool untouched = std::strcmp(placement, "output untouched before the call") == 0;
      (parallel ? touch_parallel : touch_serial)(a, n, 1.5f);
      (parallel ? touch_parallel : touch_serial)(b, n, 2.5f);
      if (!untouched) (parallel ? touch_parallel : touch_serial)(c, n, -1.0f);
      const Times t = time_calls(calls, [&] {
        if (std::strcmp(code, "highway") == 0) {
          ew::Operands<float> o;
          o.a = ew::Span<const float>(a, n, ew::MemorySpace::host);
          o.b = ew::Span<const float>(b, n, ew::MemorySpace::host);
          o.out = ew::Span<float>(c, n, ew::MemorySpace::host);
          ew::run<float>(ctx, ew::Op::add, o);
        } else {
          omp_add(a, b, c, n);
        }
      });
      if (c[n / 3] != 4.0f) {
        std::fprintf(stderr, "ew-first-touch: wrong result %g\n", double(c[n / 3]));
        return 1;
      }
      std::printf("%-34s %-12s %9.2f ms %12.1f %12.1f %12.1f\n", placement, code, t.first * 1e3, bytes / t.median / 1e9,
                  bytes / t.max / 1e9, bytes / t.min / 1e9);
      std::free(a), std::free(b), std::free(c);
    }
  }
  return 0;
}
