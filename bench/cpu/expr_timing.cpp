// ew-expr-timing: the Highway expression evaluator against the loop a user would write
// (an OpenMP loop of the same formula, this file compiled with -O3 -march=native; the
// transcendental one calls libm), in one run, so that the ratios are same-run ratios.
//
//   ew-expr-timing [--sizes 22,24,26] [--repeats 7] [--dtype f32|f64|both] [--latency-only]
//
// Part 1: the cost of one call of a compiled Kernel on 16 elements (a tight loop of
// k(ctx, {x}, {y})), next to a fixed op's call (the core's checks and dispatch) and to the
// scalar backend's (the same checks, a different evaluator).
// Part 2: GB/s of each expression of issue 11's fixed set at n = 2^22..2^26, counting the
// distinct inputs read once plus the outputs written once; the fused Highway call, the
// OpenMP loop and, for the 3-step chain, the same work done with the fixed ops. Each figure
// is the fastest of `repeats` calls in a row, taken three times per method in turn, so that
// a noisy neighbour hurts all of them alike.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ew/ew.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class T>
struct AlignedArray {
  std::unique_ptr<T, decltype(&std::free)> p{nullptr, &std::free};
  std::size_t n = 0;
  explicit AlignedArray(std::size_t count) : n(count) {
    p.reset(static_cast<T*>(std::aligned_alloc(64, (count * sizeof(T) + 63) / 64 * 64)));
    if (!p) {
      std::fprintf(stderr, "out of memory\n");
      std::exit(1);
    }
    // First touch by the threads that will use each part (the OpenMP loop's schedule).
    T* data = p.get();
    const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < m; ++i) data[i] = static_cast<T>(std::sin(0.001 * static_cast<double>(i)) * 3);
  }
  T* data() const { return p.get(); }
  ew::Span<T> span() const { return ew::Span<T>(p.get(), n); }
  ew::Span<const T> cspan() const { return ew::Span<const T>(p.get(), n); }
};

// ns per call of f, the fastest of several batches.
double ns_per_call(const std::function<void()>& f, long calls) {
  double best = 1e30;
  for (int batch = 0; batch < 7; ++batch) {
    const auto t0 = Clock::now();
    for (long i = 0; i < calls; ++i) f();
    best = std::min(best, seconds_since(t0) / static_cast<double>(calls) * 1e9);
  }
  return best;
}

void latency() {
  ew::Context hwy(ew::Backend::highway), scalar(ew::Backend::scalar);
  std::vector<float> x(16, 1.5f), y(16), z(16, 2.0f);
  const ew::Expr X = ew::input<float>(0);
  const ew::Kernel relu = ew::compile({ew::max(X, 0)});
  const ew::Kernel fma = ew::compile({ew::fma(ew::param<float>(0), ew::input<float>(1), X)});
  const ew::Kernel silu = ew::compile({X * ew::sigmoid(X)});
  const long calls = 200000;
  std::printf("# one call on 16 floats, ns (fastest of 7 batches of %ld calls)\n", calls);
  std::printf("%-44s %8s\n", "call", "ns");
  const auto row = [&](const char* what, const std::function<void()>& f) {
    f();
    std::printf("%-44s %8.1f\n", what, ns_per_call(f, calls));
  };
  row("highway kernel y = max(x, 0)", [&] { relu(hwy, {x}, {y}); });
  row("highway kernel y = fma(s, z, x)", [&] { fma(hwy, {x, z}, {y}, {0.5}); });
  row("highway kernel y = x * sigmoid(x)", [&] { silu(hwy, {x}, {y}); });
  row("highway fixed op triad (same work as fma)", [&] { ew::triad<float>(hwy, x, 0.5f, z, y); });
  row("scalar kernel y = max(x, 0)", [&] { relu(scalar, {x}, {y}); });
  row("scalar fixed op copy", [&] { ew::copy<float>(scalar, x, y); });
  std::printf("\n");
}

// Seconds of the fastest of `repeats` calls in a row, after one untimed call and a pause.
// Each method runs its calls back to back: the Highway team and the OpenMP threads both
// spin a while after a call, and on a machine with few cores one method's spinning
// threads would slow the other's next call.
double fastest(const std::function<void(std::size_t)>& f, std::size_t n, int repeats) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  f(n);
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    f(n);
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

// One expression of the fixed set: the fused call and the user's loop over the same arrays.
template <class T>
struct Case {
  const char* name;
  int inputs;  // distinct arrays read
  int outputs;
  std::function<void(std::size_t)> fused, loop, unfused;  // unfused may be empty
};

template <class T>
void throughput(const std::vector<int>& log2_sizes, int repeats) {
  ew::Context ctx(ew::Backend::highway);
  const bool f32 = sizeof(T) == 4;
  std::printf("# %s, GB/s (distinct inputs read once + outputs written once), fastest of 3 x %d calls; "
              "highway threads and OpenMP threads: %d\n",
              f32 ? "f32" : "f64", repeats, omp_get_max_threads());
  std::printf("%-34s %6s %9s %9s %9s %7s %7s\n", "expression", "log2n", "fused", "omp loop", "unfused", "ratio",
              "fus/unf");
  for (int lg : log2_sizes) {
    const std::size_t n = std::size_t(1) << lg;
    AlignedArray<T> a(n), b(n), c(n), d(n), y(n);
    const T s = T(0.75), t = T(-1.25), lo = T(-0.5), hi = T(0.5);
    const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(n);
    T *pa = a.data(), *pb = b.data(), *pc = c.data(), *pd = d.data(), *py = y.data();
    const ew::Expr A = ew::input<T>(0), B = ew::input<T>(1), C = ew::input<T>(2), D = ew::input<T>(3);
    const ew::Expr S = ew::param<T>(0), Tp = ew::param<T>(1), Lo = ew::param<T>(2), Hi = ew::param<T>(3);
    const ew::Kernel relu = ew::compile({ew::max(A, 0)});
    const ew::Kernel silu = ew::compile({A * ew::sigmoid(A)});
    const ew::Kernel blend = ew::compile({A * B + C * D});
    const ew::Kernel clamp = ew::compile({ew::min(ew::max(S * A + B, Lo), Hi)});
    const ew::Kernel chain = ew::compile({ew::fma(Tp, ew::fma(S, B, A) * C, D)});
    std::vector<Case<T>> cases = {
        {"y = max(x, 0)", 1, 1, [&](std::size_t) { relu(ctx, {a.cspan()}, {y.span()}); },
         [&](std::size_t) {
#pragma omp parallel for schedule(static)
           for (std::ptrdiff_t i = 0; i < m; ++i) py[i] = std::max(pa[i], T(0));
         },
         nullptr},
        {"y = x * sigmoid(x)", 1, 1, [&](std::size_t) { silu(ctx, {a.cspan()}, {y.span()}); },
         [&](std::size_t) {
#pragma omp parallel for schedule(static)
           for (std::ptrdiff_t i = 0; i < m; ++i) py[i] = pa[i] / (T(1) + std::exp(-pa[i]));
         },
         nullptr},
        {"c = a*b + c*d (in place)", 4, 0, [&](std::size_t) { blend(ctx, {a.cspan(), b.cspan(), c.cspan(), d.cspan()}, {c.span()}); },
         [&](std::size_t) {
#pragma omp parallel for schedule(static)
           for (std::ptrdiff_t i = 0; i < m; ++i) pc[i] = pa[i] * pb[i] + pc[i] * pd[i];
         },
         nullptr},
        {"y = min(max(s*a + b, lo), hi)", 2, 1,
         [&](std::size_t) { clamp(ctx, {a.cspan(), b.cspan()}, {y.span()}, {s, 0, lo, hi}); },
         [&](std::size_t) {
#pragma omp parallel for schedule(static)
           for (std::ptrdiff_t i = 0; i < m; ++i) py[i] = std::min(std::max(s * pa[i] + pb[i], lo), hi);
         },
         nullptr},
        // triad, mul, axpy: u = a + s*b; u = u*c; d = t*u + d.
        {"3-step chain d = t*((a+s*b)*c) + d", 4, 0,
         [&](std::size_t) { chain(ctx, {a.cspan(), b.cspan(), c.cspan(), d.cspan()}, {d.span()}, {s, t}); },
         [&](std::size_t) {
#pragma omp parallel for schedule(static)
           for (std::ptrdiff_t i = 0; i < m; ++i) pd[i] = std::fma(t, std::fma(s, pb[i], pa[i]) * pc[i], pd[i]);
         },
         [&](std::size_t) {
           ew::triad<T>(ctx, a.cspan(), s, b.cspan(), y.span());
           ew::mul<T>(ctx, y.cspan(), c.cspan(), y.span());
           ew::axpy<T>(ctx, t, y.cspan(), d.span());
         }},
    };
    for (const Case<T>& cs : cases) {
      double fused = 1e30, loop = 1e30, unfused = 1e30;
      for (int round = 0; round < 3; ++round) {
        fused = std::min(fused, fastest(cs.fused, n, repeats));
        loop = std::min(loop, fastest(cs.loop, n, repeats));
        if (cs.unfused) unfused = std::min(unfused, fastest(cs.unfused, n, repeats));
      }
      const double bytes = static_cast<double>(n) * sizeof(T) * (cs.inputs + cs.outputs);
      char unfused_text[16] = "-", fusion_text[16] = "-";
      if (cs.unfused) {
        std::snprintf(unfused_text, sizeof unfused_text, "%.2f", bytes / unfused * 1e-9);
        std::snprintf(fusion_text, sizeof fusion_text, "%.2f", unfused / fused);
      }
      std::printf("%-34s %6d %9.2f %9.2f %9s %7.2f %7s\n", cs.name, lg, bytes / fused * 1e-9, bytes / loop * 1e-9,
                  unfused_text, loop / fused, fusion_text);
      std::fflush(stdout);
    }
  }
  std::printf("# ratio: fused speed / OpenMP loop speed; fus/unf: fused speed / fixed ops' speed\n\n");
}

std::vector<int> parse_sizes(const char* text) {
  std::vector<int> v;
  for (const char* p = text; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {22, 24, 26};
  int repeats = 7;
  std::string dtype = "f32";
  bool latency_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) sizes = parse_sizes(argv[++i]);
    else if (arg == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--dtype" && i + 1 < argc) dtype = argv[++i];
    else if (arg == "--latency-only") latency_only = true;
    else {
      std::fprintf(stderr, "usage: %s [--sizes 22,24,26] [--repeats 7] [--dtype f32|f64|both] [--latency-only]\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    latency();
    if (latency_only) return 0;
    if (dtype == "f32" || dtype == "both") throughput<float>(sizes, repeats);
    if (dtype == "f64" || dtype == "both") throughput<double>(sizes, repeats);
  } catch (const ew::Error& e) {
    std::fprintf(stderr, "ew-expr-timing: %s\n", e.what());
    return 1;
  }
  return 0;
}
