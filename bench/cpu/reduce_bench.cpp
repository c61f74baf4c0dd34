// ew-reduce-bench: the reductions (ew/reduce.hpp) on the CPU backends next to OpenMP
// reduction(+:) loops (bench/cpu/reduce_peers.cpp), the way a user would write them
// without this library: one that
// accumulates in the data's type (fast, not reproducible: its bits change with the thread
// count) and one that accumulates in double (what the library computes, without its
// fixed tree: the reproducibility cost). GB/s counts every input read once. Each figure
// is the median of --rounds x --reps calls: in each round every method makes a warm-up call
// and --reps calls back to back (the thread pools of OpenMP and of the library spin a while
// after a call: alternating methods call by call would slow whichever comes second), after a
// pause longer than those spins (on 2 cores the OpenMP worker still spinning after the
// first-touch loop shared a core with the library's second thread and halved its figures at
// 2^22); each round starts with the next method, so that no method always runs first.
//   ew-reduce-bench [--sizes 18..26] [--reps 21] [--rounds 3]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ew/ew.hpp"
#include "reduce_peers.hpp"

namespace {

using Clock = std::chrono::steady_clock;

volatile double sink;

struct Method {
  std::string name;
  std::function<double()> call;
  std::vector<double> seconds;
};

template <class T>
void run(const char* dtype, bool dot, std::size_t n, int reps, int rounds) {
  std::vector<T> x(n), y(n);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {  // first touch by the threads that read them
    x[i] = static_cast<T>((i * 2654435761u % 1000) * 0.001 - 0.5);
    y[i] = static_cast<T>((i * 40503u % 1000) * 0.001 - 0.25);
  }
  std::vector<Method> methods;
  std::vector<std::unique_ptr<ew::Context>> contexts;
  for (ew::Backend b : {ew::Backend::highway, ew::Backend::kokkos}) {
    if (!ew::backend_status(b).usable) continue;
    contexts.push_back(std::make_unique<ew::Context>(b));
    ew::Context* ctx = contexts.back().get();
    methods.push_back({std::string(ew::to_string(b)), [=, &x, &y] {
                         return dot ? static_cast<double>(ew::dot<T>(*ctx, x, y)) : static_cast<double>(ew::sum<T>(*ctx, x));
                       }, {}});
  }
  const ew::bench::Reduction r = dot ? ew::bench::Reduction::dot : ew::bench::Reduction::sum;
  for (const ew::bench::ReducePeer& p : ew::bench::cpu_reduce_peers())
    if (p.supports(r, ew::dtype_v<T>, n))
      methods.push_back({p.name, [&, p, r] { return p.run(r, ew::dtype_v<T>, n, x.data(), y.data(), nullptr); }, {}});
  for (int round = 0; round < rounds; ++round)
    for (std::size_t k = 0; k < methods.size(); ++k) {
      Method& m = methods[(k + static_cast<std::size_t>(round)) % methods.size()];
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      sink = m.call();
      for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        sink = m.call();
        m.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      }
    }
  const double bytes = static_cast<double>(n) * sizeof(T) * (dot ? 2 : 1);
  double omp_gbs = 0;
  std::vector<double> gbs;
  for (auto& m : methods) {
    std::sort(m.seconds.begin(), m.seconds.end());
    gbs.push_back(bytes / m.seconds[m.seconds.size() / 2] / 1e9);
    if (m.name == std::string("openmp reduction")) omp_gbs = gbs.back();
  }
  for (std::size_t k = 0; k < methods.size(); ++k)
    std::printf("%-4s %-3s 2^%-3d %-26s %8.2f GB/s  %5.2fx openmp\n", dot ? "dot" : "sum", dtype,
                static_cast<int>(__builtin_ctzll(n)), methods[k].name.c_str(), gbs[k], gbs[k] / omp_gbs);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int lo = 18, hi = 26, reps = 21, rounds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc && std::sscanf(argv[i + 1], "%d..%d", &lo, &hi) == 2 && lo >= 0 && hi <= 32 && lo <= hi) {
      ++i;
    } else if (a == "--reps" && i + 1 < argc && (reps = std::atoi(argv[i + 1])) > 0) {
      ++i;
    } else if (a == "--rounds" && i + 1 < argc && (rounds = std::atoi(argv[i + 1])) > 0) {
      ++i;
    } else {
      std::fprintf(stderr, "usage: ew-reduce-bench [--sizes LO..HI (log2, 0..32)] [--reps N] [--rounds N]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  std::printf("ew-reduce-bench: %d OpenMP threads; %d rounds of %d calls; highway: %s\n", omp_get_max_threads(), rounds, reps,
              ew::backend_status(ew::Backend::highway).detail.c_str());
  for (int e = lo; e <= hi; ++e) {
    const std::size_t n = std::size_t(1) << e;
    for (bool dot : {false, true}) {
      run<float>("f32", dot, n, reps, rounds);
      run<double>("f64", dot, n, reps, rounds);
    }
  }
}
