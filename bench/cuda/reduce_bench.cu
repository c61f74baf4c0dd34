// ew-cuda-reduce-bench: the cuda backend's reductions (ew/reduce.hpp) next to
// cub::DeviceReduce (Sum; TransformReduce for dot and the sum of squares) and cuBLAS
// (cublasSdot/Ddot, cublasSnrm2/Dnrm2), on device memory, every call ending with its
// result on the host (the library's calls do; cub's result is copied back, cuBLAS's
// host pointer mode waits for it). GB/s counts every input read once. Each figure is the
// median of --reps calls after a warm-up, each method's calls back to back. The ratio
// columns are the library over cub and over cuBLAS. cub's and cuBLAS's sums are not
// reproducible (their trees depend on the GPU and the version); the library's are.
//   ew-cuda-reduce-bench [--sizes 20..28] [--reps 30] [--csv FILE]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <functional>
#include <stdexcept>
#include <string>
#include <thrust/iterator/counting_iterator.h>
#include <vector>

#include "ew/ew.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(e));
}

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

enum class What { sum, dot, norm2 };
const char* name(What w) { return w == What::sum ? "sum" : w == What::dot ? "dot" : "norm2"; }

template <class T>
struct Peers {
  cudaStream_t stream;
  cublasHandle_t blas;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  T* out = nullptr;

  void reserve(std::size_t bytes) {
    if (bytes <= temp_bytes) return;
    if (temp) cudaFree(temp);
    check(cudaMalloc(&temp, bytes), "cudaMalloc");
    temp_bytes = bytes;
  }
  T result() {
    T host;
    check(cudaMemcpyAsync(&host, out, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return host;
  }
  double cub(What w, const T* x, const T* y, std::size_t n) {
    std::size_t bytes = 0;
    const long long count = static_cast<long long>(n);
    if (w == What::sum) {
      check(cub::DeviceReduce::Sum(nullptr, bytes, x, out, count, stream), "cub Sum");
      reserve(bytes);
      check(cub::DeviceReduce::Sum(temp, bytes, x, out, count, stream), "cub Sum");
      return result();
    }
    if (w == What::dot) {
      thrust::counting_iterator<long long> index(0);
      check(cub::DeviceReduce::TransformReduce(nullptr, bytes, index, out, count, ::cuda::std::plus<>{},
                                               Product<T>{x, y}, T(0), stream),
            "cub TransformReduce");
      reserve(bytes);
      check(cub::DeviceReduce::TransformReduce(temp, bytes, index, out, count, ::cuda::std::plus<>{},
                                               Product<T>{x, y}, T(0), stream),
            "cub TransformReduce");
      return result();
    }
    check(cub::DeviceReduce::TransformReduce(nullptr, bytes, x, out, count, ::cuda::std::plus<>{}, Square<T>{}, T(0),
                                             stream),
          "cub TransformReduce");
    reserve(bytes);
    check(cub::DeviceReduce::TransformReduce(temp, bytes, x, out, count, ::cuda::std::plus<>{}, Square<T>{}, T(0),
                                             stream),
          "cub TransformReduce");
    return std::sqrt(static_cast<double>(result()));
  }
  double cublas(What w, const T* x, const T* y, std::size_t n) {
    const int count = static_cast<int>(n);
    T r{};
    if constexpr (sizeof(T) == 4) {
      if (w == What::dot) check(cublasSdot(blas, count, x, 1, y, 1, &r), "cublasSdot");
      else check(cublasSnrm2(blas, count, x, 1, &r), "cublasSnrm2");
    } else {
      if (w == What::dot) check(cublasDdot(blas, count, x, 1, y, 1, &r), "cublasDdot");
      else check(cublasDnrm2(blas, count, x, 1, &r), "cublasDnrm2");
    }
    return r;
  }
};

struct Row {
  std::string method;
  double seconds, value;
};

template <class T>
void run(ew::Context& ctx, Peers<T>& peers, What w, std::size_t n, int reps, const T* x, const T* y, FILE* csv) {
  const ew::Span<const T> xs(x, n, ew::MemorySpace::device), ys(y, n, ew::MemorySpace::device);
  std::vector<std::pair<std::string, std::function<double()>>> methods;
  methods.emplace_back("ew cuda", [&] {
    return w == What::sum ? ew::sum<T>(ctx, xs) : w == What::dot ? ew::dot<T>(ctx, xs, ys) : ew::norm2<T>(ctx, xs);
  });
  methods.emplace_back("cub", [&] { return peers.cub(w, x, y, n); });
  if (w != What::sum && n < (std::size_t(1) << 31)) methods.emplace_back("cublas", [&] { return peers.cublas(w, x, y, n); });
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
    std::printf("%-5s %s 2^%-2d %-8s %9.1f GB/s %9.2f us  %5.2fx cub", name(w), dtype, __builtin_ctzll(n),
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
  Peers<T> peers{static_cast<cudaStream_t>(ctx.native_stream()), nullptr};
  check(cublasCreate(&peers.blas), "cublasCreate");
  check(cublasSetStream(peers.blas, peers.stream), "cublasSetStream");
  check(cudaMalloc(&peers.out, sizeof(T)), "cudaMalloc");
  for (int e = lo; e <= hi; ++e)
    for (What w : {What::sum, What::dot, What::norm2}) run<T>(ctx, peers, w, std::size_t(1) << e, reps, x.data(), y.data(), csv);
  cublasDestroy(peers.blas);
  cudaFree(peers.out);
  if (peers.temp) cudaFree(peers.temp);
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
