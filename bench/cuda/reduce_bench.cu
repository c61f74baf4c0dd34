// ew-cuda-reduce-bench: the cuda backend's reductions (ew/reduce.hpp) next to
// cub::DeviceReduce (Sum; TransformReduce for dot and the sum of squares) and cuBLAS
// (cublasSdot/Ddot, cublasSnrm2/Dnrm2), on device memory, every call ending with its
// result on the host (the library's calls do; cub's result is copied back, cuBLAS's
// host pointer mode waits for it). GB/s counts every input read once. Each figure is the
// median of --reps calls after a warm-up, each method's calls back to back. The ratio
// columns are the library over cub and over cuBLAS. cub's and cuBLAS's sums are not
// reproducible (their trees depend on the GPU and the version); the library's are.
//   ew-cuda-reduce-bench [--sizes 20..28] [--reps 30] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ew/ew.hpp"
#include "reduce_peers.hpp"

namespace {

using ew::bench::Reduction;
using What = Reduction;
const char* name(What w) { return ew::bench::to_string(w); }

struct Row {
  std::string method;
  double seconds, value;
};

template <class T>
void run(ew::Context& ctx, What w, std::size_t n, int reps, const T* x, const T* y, FILE* csv) {
  const ew::Span<const T> xs(x, n, ew::MemorySpace::device), ys(y, n, ew::MemorySpace::device);
  std::vector<std::pair<std::string, std::function<double()>>> methods;
  methods.emplace_back("ew cuda", [&] {
    return w == What::sum ? ew::sum<T>(ctx, xs) : w == What::dot ? ew::dot<T>(ctx, xs, ys) : ew::norm2<T>(ctx, xs);
  });
  for (const ew::bench::ReducePeer& p : ew::bench::cuda_reduce_peers())
    if (p.supports(w, ew::dtype_v<T>, n))
      methods.emplace_back(p.name, [&ctx, p, w, n, x, y] { return p.run(w, ew::dtype_v<T>, n, x, y, ctx.native_stream()); });
  std::vector<Row> rows;
  for (auto& [label, call] : methods) {
    double value = call();
    std::vector<double> seconds;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      value = call();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    rows.push_back({label, seconds[seconds.size() / 2], value});
  }
  const double bytes = static_cast<double>(n) * sizeof(T) * (w == What::dot ? 2 : 1);
  const char* dtype = sizeof(T) == 4 ? "f32" : "f64";
  for (const Row& r : rows) {
    std::printf("%-5s %s 2^%-2d %-18s %9.1f GB/s %9.2f us  %5.2fx cub", name(w), dtype, __builtin_ctzll(n),
                r.method.c_str(), bytes / r.seconds / 1e9, r.seconds * 1e6, rows[1].seconds / r.seconds);
    if (rows.size() > 2) std::printf("  %5.2fx cublas", rows[2].seconds / r.seconds);
    std::printf("  value %.9g\n", r.value);
    if (csv)
      std::fprintf(csv, "%s,%s,%zu,%s,%.6e,%.3f,%.17g\n", name(w), dtype, n, r.method.c_str(), r.seconds,
                   bytes / r.seconds / 1e9, r.value);
  }
  std::fflush(stdout);
}

template <class T>
void sweep(ew::Context& ctx, int lo, int hi, int reps, FILE* csv) {
  const std::size_t max_n = std::size_t(1) << hi;
  ew::Buffer<T> x(ctx, max_n), y(ctx, max_n);
  std::vector<T> host(max_n);
  for (std::size_t i = 0; i < max_n; ++i) host[i] = static_cast<T>((i * 2654435761u % 1000) * 0.001 - 0.5);
  x.upload(host.data(), max_n);
  for (std::size_t i = 0; i < max_n; ++i) host[i] = static_cast<T>((i * 40503u % 1000) * 0.001 - 0.25);
  y.upload(host.data(), max_n);
  for (int e = lo; e <= hi; ++e)
    for (What w : ew::bench::all_reductions) run<T>(ctx, w, std::size_t(1) << e, reps, x.data(), y.data(), csv);
}

}  // namespace

int main(int argc, char** argv) {
  int lo = 20, hi = 28, reps = 30;
  const char* csv_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc && std::sscanf(argv[i + 1], "%d..%d", &lo, &hi) == 2 && lo >= 0 && hi <= 31 && lo <= hi) {
      ++i;
    } else if (a == "--reps" && i + 1 < argc && (reps = std::atoi(argv[i + 1])) > 0) {
      ++i;
    } else if (a == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: ew-cuda-reduce-bench [--sizes LO..HI (log2, 0..31)] [--reps N] [--csv FILE]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    ew::Context ctx(ew::Backend::cuda);
    std::printf("ew-cuda-reduce-bench: %s\n", ew::backend_status(ew::Backend::cuda).detail.c_str());
    FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
    if (csv) std::fprintf(csv, "reduction,dtype,n,method,seconds,gbps,value\n");
    sweep<float>(ctx, lo, hi, reps, csv);
    sweep<double>(ctx, lo, hi, reps, csv);
    if (csv) std::fclose(csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ew-cuda-reduce-bench: %s\n", e.what());
    return 1;
  }
}
