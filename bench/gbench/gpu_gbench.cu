// Google Benchmark cases for the GPU: the library's cuda backend and the CUDA peers
// (cub::DeviceTransform, cuBLAS) on the same device arrays, timed with CUDA events
// around each call (manual time), so Google Benchmark's own options and JSON apply.
// Cold: each iteration takes the next of enough array sets to span 4x the L2 cache.
// Registered at start-up only when a GPU is usable; without one nothing is added.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ew/ew.hpp"
#include "peers.hpp"

namespace {

using ew::DType;
using ew::Op;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}

struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(std::size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~DeviceMemory() { cudaFree(p); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

// Everything the cases share: one stream (borrowed by the context, handed to the
// peers), two events, and the arrays of the current (dtype, n).
struct Gpu {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::unique_ptr<ew::Context> ctx;
  DType dtype = DType::f32;
  std::size_t n = 0, set_bytes = 0, sets = 0;
  std::unique_ptr<DeviceMemory> arena;

  static Gpu& get() {
    static Gpu g;
    return g;
  }
  Gpu() {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    if (ew::backend_status(ew::Backend::cuda).usable) {
      ew::ContextOptions o;
      o.stream = stream;
      ctx = std::make_unique<ew::Context>(ew::Backend::cuda, o);
    }
  }
  // Three arrays per set, each on a 256-byte boundary; values 1 + i % 7 / 8, never zero.
  void prepare(DType d, std::size_t count) {
    if (d == dtype && count == n && arena) return;
    arena.reset();
    dtype = d, n = count;
    const std::size_t array = (n * ew::size_of(d) + 255) / 256 * 256;
    set_bytes = 3 * array;
    int dev = 0, l2 = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    sets = std::max<std::size_t>(1, (4 * std::size_t(l2) + set_bytes - 1) / set_bytes);
    arena = std::make_unique<DeviceMemory>(sets * set_bytes);
    std::vector<unsigned char> host(set_bytes);
    for (std::size_t i = 0; i < set_bytes / ew::size_of(d); ++i) {
      if (d == DType::f32) reinterpret_cast<float*>(host.data())[i] = 1.0f + float(i % 7) / 8;
      else reinterpret_cast<double*>(host.data())[i] = 1.0 + double(i % 7) / 8;
    }
    for (std::size_t s = 0; s < sets; ++s)
      check(cudaMemcpy(static_cast<char*>(arena->p) + s * set_bytes, host.data(), set_bytes, cudaMemcpyHostToDevice),
            "cudaMemcpy");
  }
  char* set(std::size_t k) const { return static_cast<char*>(arena->p) + (k % sets) * set_bytes; }
};

// s and t keep in-place results bounded over many iterations.
constexpr double s_value = 0.5, t_value = 0.5;

using Runner = std::function<void(Op, DType, std::size_t, const void*, const void*, void*, cudaStream_t)>;

template <class T>
void library_call(ew::Context& ctx, Op op, std::size_t n, const void* a, const void* b, void* out) {
  ew::Operands<T> args;
  args.a = ew::Span<const T>(static_cast<const T*>(a), n, ew::MemorySpace::device);
  if (ew::info(op).input_streams == 2) args.b = ew::Span<const T>(static_cast<const T*>(b), n, ew::MemorySpace::device);
  args.out = ew::Span<T>(static_cast<T*>(out), n, ew::MemorySpace::device);
  args.s = static_cast<T>(s_value);
  args.t = static_cast<T>(t_value);
  ew::run(ctx, op, args);
}

void bench_op(benchmark::State& state, const Runner& run, Op op, DType dtype, std::size_t n) {
  Gpu& g = Gpu::get();
  g.prepare(dtype, n);
  const std::size_t array = g.set_bytes / 3;
  const bool in_place = ew::info(op).in_place;
  std::size_t k = 0;
  try {
    for (auto _ : state) {
      char* base = g.set(k++);
      void* out = base + 2 * array;
      check(cudaEventRecord(g.start, g.stream), "cudaEventRecord");
      run(op, dtype, n, base, in_place ? out : base + array, out, g.stream);
      check(cudaEventRecord(g.stop, g.stream), "cudaEventRecord");
      check(cudaEventSynchronize(g.stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, g.start, g.stop), "cudaEventElapsedTime");
      state.SetIterationTime(ms * 1e-3);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * ew::info(op).bytes_per_element(dtype)));
  state.SetLabel(g.sets > 1 ? "cold" : "cold (one set > 4x L2)");
}

constexpr int log2_sizes[] = {16, 20, 24, 28};

bool register_gpu_cases() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return false;
  }
  std::vector<std::pair<std::string, Runner>> runners;
  if (ew::backend_status(ew::Backend::cuda).usable)
    runners.emplace_back("cuda", [](Op op, DType d, std::size_t n, const void* a, const void* b, void* out, cudaStream_t) {
      ew::Context& ctx = *Gpu::get().ctx;
      if (d == DType::f32) library_call<float>(ctx, op, n, a, b, out);
      else library_call<double>(ctx, op, n, a, b, out);
    });
  std::vector<ew::bench::Peer> peers = ew::bench::cuda_peers();
  for (const ew::bench::Peer& peer : peers)
    runners.emplace_back(peer.name, [peer](Op op, DType d, std::size_t n, const void* a, const void* b, void* out,
                                           cudaStream_t s) { peer.run(op, d, n, a, b, out, s_value, t_value, s); });
  for (DType dtype : ew::all_dtypes)
    for (int log2n : log2_sizes)
      for (const ew::OpInfo& oi : ew::op_table)
        for (const auto& [name, run] : runners) {
          bool supported = true;
          for (const ew::bench::Peer& peer : peers)
            if (name == peer.name) supported = peer.supports(oi.op, dtype);
          if (!supported) continue;
          const std::size_t n = std::size_t(1) << log2n;
          const std::string title = std::string("gpu/") + oi.name + "/" + ew::to_string(dtype) + "/n:2^" +
                                    std::to_string(log2n) + "/" + name;
          benchmark::RegisterBenchmark(title.c_str(), [run = run, op = oi.op, dtype, n](benchmark::State& st) {
            bench_op(st, run, op, dtype, n);
          })->UseManualTime();
        }
  return true;
}

const bool registered = register_gpu_cases();

}  // namespace
