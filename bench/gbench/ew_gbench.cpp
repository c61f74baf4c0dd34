// Google Benchmark suite for the CPU: every usable CPU backend and every CPU peer,
// for every op, dtype and a ladder of sizes, on the same arrays in the same run.
// Bytes come from the op table (bytes_per_element), so bytes_per_second is the
// bandwidth each implementation reached. Sizes whose arrays overflow the L2 caches
// run cold: each iteration takes the next of enough array sets to span twice the
// last-level cache, so nothing useful is left in cache from earlier iterations.
// Sizes that fit in L2 run warm, which is how small ops are used in practice.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ew/ew.hpp"
#include "peers.hpp"

namespace {

using ew::DType;
using ew::Op;

// Total size of each cache level, over all cores (sysfs; a conservative guess without).
std::size_t cache_bytes(int wanted_level) {
  std::size_t per_instance = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || level != wanted_level || !(size_file >> size) || size.empty()) continue;
    per_instance = std::stoull(size) << (size.back() == 'K' ? 10 : size.back() == 'M' ? 20 : 0);
  }
  if (per_instance == 0) return wanted_level == 2 ? (std::size_t(1) << 20) : (std::size_t(32) << 20);
  // L2 is private: count one per core. The LLC is shared: count it once.
  return wanted_level == 2 ? per_instance * std::max(1u, std::thread::hardware_concurrency()) : per_instance;
}

struct HostArray {
  void* p;
  explicit HostArray(std::size_t bytes) : p(std::aligned_alloc(64, (bytes + 63) / 64 * 64)) {
    if (!p) throw std::bad_alloc();
  }
  ~HostArray() { std::free(p); }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
};

struct ArraySet {
  std::unique_ptr<HostArray> a, b, out;
};

// The arrays of the current (dtype, n); benchmarks are registered grouped by size so
// that consecutive ones reuse them.
struct Pool {
  DType dtype = DType::f32;
  std::size_t n = 0;
  bool cold = false;
  std::vector<ArraySet> sets;
};

template <class T>
void fill(void* p, std::size_t n, T value) {
  T* x = static_cast<T*>(p);
  for (std::size_t i = 0; i < n; ++i) x[i] = value + T(i % 7) / T(8);
}

Pool& pool_for(DType dtype, std::size_t n) {
  static Pool pool;
  if (pool.n == n && pool.dtype == dtype) return pool;
  pool.sets.clear();
  pool.dtype = dtype;
  pool.n = n;
  const std::size_t bytes = n * ew::size_of(dtype);
  const std::size_t set_bytes = 3 * bytes;
  pool.cold = set_bytes > cache_bytes(2);
  const std::size_t count = pool.cold ? std::max<std::size_t>(2, (2 * cache_bytes(3) + set_bytes - 1) / set_bytes) : 1;
  for (std::size_t k = 0; k < count; ++k) {
    ArraySet s{std::make_unique<HostArray>(bytes), std::make_unique<HostArray>(bytes),
               std::make_unique<HostArray>(bytes)};
    for (void* p : {s.a->p, s.b->p, s.out->p}) {
      if (dtype == DType::f32)
        fill<float>(p, n, 1.0f);
      else
        fill<double>(p, n, 1.0);
    }
    pool.sets.push_back(std::move(s));
  }
  return pool;
}

// One implementation: runs op over raw host arrays (for in-place ops b == out).
using Runner = std::function<void(Op, DType, std::size_t, const void*, const void*, void*)>;

// s and t keep in-place results bounded over millions of iterations.
constexpr double s_value = 0.5, t_value = 0.5;

template <class T>
void run_on(ew::Context& ctx, Op op, std::size_t n, const void* a, const void* b, void* out) {
  ew::Operands<T> args;
  args.a = ew::Span<const T>(static_cast<const T*>(a), n, ew::MemorySpace::host);
  if (ew::info(op).input_streams == 2) args.b = ew::Span<const T>(static_cast<const T*>(b), n, ew::MemorySpace::host);
  args.out = ew::Span<T>(static_cast<T*>(out), n, ew::MemorySpace::host);
  args.s = static_cast<T>(s_value);
  args.t = static_cast<T>(t_value);
  ew::run(ctx, op, args);
}

Runner backend_runner(ew::Context& ctx) {
  return [&ctx](Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out) {
    if (dtype == DType::f32)
      run_on<float>(ctx, op, n, a, b, out);
    else
      run_on<double>(ctx, op, n, a, b, out);
    ctx.synchronize();
  };
}

void bench_op(benchmark::State& state, const Runner& run, Op op, DType dtype, std::size_t n) {
  Pool& pool = pool_for(dtype, n);
  const bool in_place = ew::info(op).in_place;
  std::size_t k = 0;
  for (auto _ : state) {
    ArraySet& set = pool.sets[k];
    k = k + 1 == pool.sets.size() ? 0 : k + 1;
    run(op, dtype, n, set.a->p, in_place ? set.out->p : set.b->p, set.out->p);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * ew::info(op).bytes_per_element(dtype)));
  state.SetLabel(pool.cold ? "cold" : "warm");
}

// The cost of one call that does (almost) nothing: argument checks, dispatch, and
// whatever threading a backend sets up. 16 floats, warm.
void bench_dispatch(benchmark::State& state, ew::Context& ctx) {
  std::vector<float> a(16, 1.0f), b(16, 2.0f), c(16);
  for (auto _ : state) {
    ew::add<float>(ctx, a, b, c);
    ctx.synchronize();
    benchmark::DoNotOptimize(c.data());
  }
}

// CPU backends: usable and working on host memory (a Kokkos built for a GPU is not one).
std::vector<std::unique_ptr<ew::Context>>& cpu_contexts() {
  static std::vector<std::unique_ptr<ew::Context>> contexts = [] {
    std::vector<std::unique_ptr<ew::Context>> v;
    for (const ew::BackendStatus& s : ew::available_backends()) {
      if (!s.usable) continue;
      auto ctx = std::make_unique<ew::Context>(s.backend);
      if (ew::Buffer<float>(*ctx, 1).space() != ew::MemorySpace::host) continue;
      v.push_back(std::move(ctx));
    }
    return v;
  }();
  return contexts;
}

constexpr std::size_t log2_sizes[] = {12, 15, 18, 22, 25};
constexpr Op ops[] = {Op::copy, Op::scale, Op::add, Op::mul, Op::triad, Op::axpy, Op::axpby};

void register_all() {
  std::vector<std::pair<std::string, Runner>> runners;
  for (auto& ctx : cpu_contexts()) runners.emplace_back(ctx->backend_name(), backend_runner(*ctx));
  for (const ew::bench::Peer& peer : ew::bench::cpu_peers()) {
    Runner r = [peer](Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out) {
      peer.run(op, dtype, n, a, b, out, s_value, t_value, nullptr);
    };
    runners.emplace_back(peer.name, r);
  }

  for (auto& ctx : cpu_contexts()) {
    ew::Context* c = ctx.get();
    benchmark::RegisterBenchmark((std::string("dispatch_overhead/add/f32/n:16/") + c->backend_name()).c_str(),
                                 [c](benchmark::State& st) { bench_dispatch(st, *c); });
  }
  for (DType dtype : ew::all_dtypes)
    for (std::size_t log2n : log2_sizes)
      for (Op op : ops)
        for (const auto& [name, run] : runners) {
          const std::size_t n = std::size_t(1) << log2n;
          const std::string title = std::string(ew::to_string(op)) + "/" + ew::to_string(dtype) + "/n:2^" +
                                    std::to_string(log2n) + "/" + name;
          benchmark::RegisterBenchmark(title.c_str(), [run = run, op, dtype, n](benchmark::State& st) {
            bench_op(st, run, op, dtype, n);
          })->UseRealTime();
        }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  for (const ew::BackendStatus& s : ew::available_backends())
    if (s.usable) benchmark::AddCustomContext("ew." + s.name, s.detail);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
