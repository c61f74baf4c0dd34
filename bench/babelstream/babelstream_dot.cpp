// ew-babelstream: BabelStream's five classic kernels, driven as BabelStream's driver drives
// them (src/main.cpp, version 5), written on this library's public API, so that its Dot
// runs through ew::dot:
//   arrays a, b, c start at 0.1, 0.2 and 0.0 (BabelStream's startA/B/C), scalar 0.4;
//   num_times rounds of Copy (c = a), Mul (b = scalar c), Add (c = a + b), Triad
//   (a = b + scalar c) and Dot (sum = a . b), each a blocking call timed on its own;
//   the verification of BabelStream's check_solution: the gold values of a, b, c after
//   the same rounds in T, the average absolute error of each array within 100 epsilon,
//   and the dot's relative error |sum - goldA goldB N| / |goldA goldB N| within 1e-8;
//   MBytes/sec as BabelStream counts them (Dot: 2 arrays read, 2 sizeof(T) N bytes) over
//   the fastest call, the first round left out; min, max and average seconds.
// On every usable backend (or those given with --backend), one after another. Exit status
// 1 when any backend fails the verification, 2 for a bad argument.
//   ew-babelstream [--backend NAME]... [-s|--arraysize N] [-n|--numtimes N] [--float]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "ew/ew.hpp"

namespace {

// BabelStream's Stream.h.
constexpr double startA = 0.1, startB = 0.2, startC = 0.0, startScalar = 0.4;

struct Options {
  std::vector<ew::Backend> backends;
  std::size_t size = std::size_t(1) << 25;  // BabelStream's default ARRAY_SIZE
  unsigned times = 100;                     // and num_times
  bool use_float = false;
};

using Clock = std::chrono::high_resolution_clock;

template <class T>
double average_error(const std::vector<T>& v, T gold) {
  const double sum = std::accumulate(v.begin(), v.end(), 0.0,
                                     [&](double s, T x) { return s + std::fabs(static_cast<double>(x) - gold); });
  return sum / static_cast<double>(v.size());
}

// One backend: the kernels, the table and the verification. True when it verifies.
template <class T>
bool run(ew::Backend backend, const Options& o) {
  ew::Context ctx(backend);
  const std::size_t n = o.size;
  const T scalar = static_cast<T>(startScalar);
  ew::Buffer<T> a(ctx, n), b(ctx, n), c(ctx, n);
  {
    std::vector<T> init(n, static_cast<T>(startA));
    a.upload(init.data(), n);
    std::fill(init.begin(), init.end(), static_cast<T>(startB));
    b.upload(init.data(), n);
    std::fill(init.begin(), init.end(), static_cast<T>(startC));
    c.upload(init.data(), n);
  }
  const ew::Span<const T> ca(a.data(), n, a.space()), cb(b.data(), n, b.space()), cc(c.data(), n, c.space());
  std::vector<std::vector<double>> timings(5);
  T sum{};
  const auto timed = [&](int k, auto&& call) {
    const auto t0 = Clock::now();
    call();
    ctx.synchronize();  // BabelStream's kernels are blocking calls
    timings[k].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  };
  for (unsigned k = 0; k < o.times; ++k) {
    timed(0, [&] { ew::copy<T>(ctx, ca, c.span()); });
    timed(1, [&] { ew::scale<T>(ctx, scalar, cc, b.span()); });
    timed(2, [&] { ew::add<T>(ctx, ca, cb, c.span()); });
    timed(3, [&] { ew::triad<T>(ctx, cb, scalar, cc, a.span()); });
    timed(4, [&] { sum = ew::dot<T>(ctx, ca, cb); });
  }

  std::printf("\nBabelStream through ew::%s on %s\n", sizeof(T) == 4 ? "dot<float>" : "dot<double>",
              ew::to_string(ctx.backend()));
  std::printf("Running kernels %u times\nPrecision: %s\nArray size: %.1f MB (=%.1f GB)\n", o.times,
              sizeof(T) == 4 ? "float" : "double", 1e-6 * sizeof(T) * n, 1e-9 * sizeof(T) * n);
  const char* labels[] = {"Copy", "Mul", "Add", "Triad", "Dot"};
  const double bytes[] = {2.0 * sizeof(T) * n, 2.0 * sizeof(T) * n, 3.0 * sizeof(T) * n, 3.0 * sizeof(T) * n,
                          2.0 * sizeof(T) * n};
  std::printf("%-12s%-12s%-12s%-12s%-12s\n", "Function", "MBytes/sec", "Min (sec)", "Max", "Average");
  for (int i = 0; i < 5; ++i) {
    const auto& t = timings[i];
    // BabelStream leaves the first round out (with one round, there is nothing else).
    const auto begin = t.size() > 1 ? t.begin() + 1 : t.begin();
    const double lo = *std::min_element(begin, t.end()), hi = *std::max_element(begin, t.end());
    const double avg = std::accumulate(begin, t.end(), 0.0) / static_cast<double>(t.end() - begin);
    std::printf("%-12s%-12.3f%-12.5f%-12.5f%-12.5f\n", labels[i], 1e-6 * bytes[i] / lo, lo, hi, avg);
  }

  // BabelStream's check_solution.
  T goldA = static_cast<T>(startA), goldB = static_cast<T>(startB), goldC = static_cast<T>(startC);
  for (unsigned i = 0; i < o.times; ++i) {
    goldC = goldA;
    goldB = scalar * goldC;
    goldC = goldA + goldB;
    goldA = goldB + scalar * goldC;
  }
  const T goldSum = goldA * goldB * static_cast<T>(n);
  std::vector<T> ha(n), hb(n), hc(n);
  a.download(ha.data(), n);
  b.download(hb.data(), n);
  c.download(hc.data(), n);
  const double epsi = std::numeric_limits<T>::epsilon() * 100.0;
  bool ok = true;
  const double errs[] = {average_error(ha, goldA), average_error(hb, goldB), average_error(hc, goldC)};
  const char* names[] = {"a[]", "b[]", "c[]"};
  for (int i = 0; i < 3; ++i)
    if (errs[i] > epsi) {
      std::printf("Validation failed on %s. Average error %g\n", names[i], errs[i]);
      ok = false;
    }
  const double errSum = std::fabs((static_cast<double>(sum) - goldSum) / static_cast<double>(goldSum));
  if (errSum > 1.0E-8) {
    std::printf("Validation failed on sum. Error %g\nSum was %.15f but should be %.15f\n", errSum,
                static_cast<double>(sum), static_cast<double>(goldSum));
    ok = false;
  }
  std::printf("Dot %.1f GB/s (2 arrays read), sum %.15g, relative error %.3g: %s\n",
              1e-9 * bytes[4] / *std::min_element(timings[4].begin() + (o.times > 1 ? 1 : 0), timings[4].end()),
              static_cast<double>(sum), errSum, ok ? "verified" : "FAILED");
  std::fflush(stdout);
  return ok;
}

int usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: ew-babelstream [--backend NAME]... [-s|--arraysize N] [-n|--numtimes N >= 2] [--float]\n");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    char* end = nullptr;
    if (a == "--backend" && has_value) {
      try {
        o.backends.push_back(ew::parse_backend(argv[++i]));
      } catch (const ew::Error& e) {
        std::fprintf(stderr, "ew-babelstream: %s\n", e.what());
        return 2;
      }
    } else if ((a == "-s" || a == "--arraysize") && has_value) {
      const unsigned long long v = std::strtoull(argv[++i], &end, 10);
      if (*end || v == 0) return usage(2);
      o.size = static_cast<std::size_t>(v);
    } else if ((a == "-n" || a == "--numtimes") && has_value) {
      const unsigned long v = std::strtoul(argv[++i], &end, 10);
      if (*end || v < 2) return usage(2);
      o.times = static_cast<unsigned>(v);
    } else if (a == "--float") {
      o.use_float = true;
    } else if (a == "--help" || a == "-h") {
      return usage(0);
    } else {
      return usage(2);
    }
  }
  if (o.backends.empty())
    for (const ew::BackendStatus& s : ew::available_backends())
      if (s.usable) o.backends.push_back(s.backend);
  bool ok = true;
  for (ew::Backend b : o.backends) {
    try {
      ok &= o.use_float ? run<float>(b, o) : run<double>(b, o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ew-babelstream: %s: %s\n", ew::to_string(b), e.what());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
