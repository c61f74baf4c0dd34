// ew-kokkos-bench: the kokkos backend beside the backend it must keep up with, in one
// run, through the public API only.
//   GPU (Kokkos on Cuda): every op x dtype x n in {2^20, 2^22, ..., 2^28}, kokkos vs
//     the cuda backend, on one device arena of 8 GiB (both accept device memory);
//   CPU (Kokkos on a host space): add and triad at 2^25, kokkos vs the highway backend
//     and the plain OpenMP loop peer, on a host arena of 2 GiB.
// Cold cache: the operands of consecutive calls rotate through the arena, so no call
// finds its data in a cache. Each batch of back-to-back calls is timed on the host
// clock between two synchronize() calls; backends alternate batch by batch; the figure
// is the median over batches. Same method for every column, so ratios are fair.
// Usage: ew-kokkos-bench [--quick] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arena.hpp"
#include "ew/ew.hpp"
#include "peers.hpp"

namespace {

using namespace ew;
using ew::bench::Arena;
using ew::bench::median;

// One column of a table: something that runs call j of an op.
struct Runner {
  std::string name;
  std::function<void(Op, DType, std::size_t, long)> call;
  std::function<void()> wait;
};

Runner ew_runner(Context& ctx, const Arena& arena) {
  return {ctx.backend_name(),
          [&ctx, &arena](Op op, DType d, std::size_t n, long j) {
            const Arena::Ptrs p = arena.at(op, n, d, j);
            auto go = [&](auto zero) {
              using T = decltype(zero);
              Operands<T> args;
              args.a = Span<const T>(static_cast<const T*>(p.a), n, arena.space);
              if (info(op).input_streams == 2) args.b = Span<const T>(static_cast<const T*>(p.b), n, arena.space);
              args.out = Span<T>(static_cast<T*>(p.out), n, arena.space);
              args.s = T(1.25), args.t = T(0.75);
              run(ctx, op, args);
            };
            if (d == DType::f32) go(0.0f);
            else go(0.0);
          },
          [&ctx] { ctx.synchronize(); }};
}

Runner peer_runner(const bench::Peer& peer, const Arena& arena) {
  return {peer.name,
          [&peer, &arena](Op op, DType d, std::size_t n, long j) {
            const Arena::Ptrs p = arena.at(op, n, d, j);
            peer.run(op, d, n, p.a, p.b, p.out, 1.25, 0.75, nullptr);
          },
          [] {}};
}

// Seconds per call for each runner; batches alternate between runners.
std::vector<double> time_runners(std::vector<Runner>& runners, Op op, DType d, std::size_t n, int batch, int batches) {
  std::vector<std::vector<double>> per_call(runners.size());
  std::vector<long> next(runners.size(), 0);
  for (std::size_t r = 0; r < runners.size(); ++r) {  // warm-up: first-touch, module load, pools
    for (int w = 0; w < 2; ++w) runners[r].call(op, d, n, next[r]++);
    runners[r].wait();
  }
  for (int b = 0; b < batches; ++b)
    for (std::size_t r = 0; r < runners.size(); ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) runners[r].call(op, d, n, next[r]++);
      runners[r].wait();
      per_call[r].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / batch);
    }
  std::vector<double> result;
  for (auto& v : per_call) result.push_back(median(v));
  return result;
}

struct Csv {
  std::ofstream file;
  void row(const std::string& line) {
    if (file) file << line << "\n";
  }
};

// Random-looking values in [1, 2) (finite, never zero) over the whole arena: one host
// chunk, uploaded once, then copied over the arena by the context.
void fill(Context& ctx, Arena& arena) {
  const std::size_t chunk = std::min<std::size_t>(arena.bytes, std::size_t(256) << 20) / sizeof(float);
  std::vector<float> host(chunk);
  unsigned h = 12345;
  for (auto& x : host) {
    h = h * 1664525u + 1013904223u;
    x = 1.0f + float(h >> 9) * (1.0f / 8388608.0f);
  }
  Span<float> first(reinterpret_cast<float*>(arena.base), chunk, arena.space);
  if (arena.space == MemorySpace::host) {
    std::memcpy(first.data, host.data(), chunk * sizeof(float));
  } else {
    Buffer<float> staging(ctx, chunk);
    staging.upload(host.data(), chunk);
    copy<float>(ctx, Span<const float>(staging.data(), chunk, staging.space()), first);
    ctx.synchronize();
  }
  for (std::size_t off = chunk; off + chunk <= arena.bytes / sizeof(float); off += chunk)
    copy<float>(ctx, Span<const float>(first.data, chunk, arena.space),
                Span<float>(reinterpret_cast<float*>(arena.base) + off, chunk, arena.space));
  ctx.synchronize();
}

int batch_for(Op op, DType d, std::size_t n, double gbs_guess) {
  const double seconds = double(info(op).bytes_per_element(d)) * double(n) / (gbs_guess * 1e9);
  return std::clamp(int(3e-3 / seconds), 3, 200);
}

constexpr Op all_ops[] = {Op::copy, Op::scale, Op::add, Op::mul, Op::triad, Op::axpy, Op::axpby};

int gpu_section(Context& kokkos, bool quick, Csv& csv) {
  if (!backend_status(Backend::cuda).usable) {
    std::printf("GPU: the cuda backend is unusable (%s): no same-run reference\n",
                backend_status(Backend::cuda).reason.c_str());
    return 1;
  }
  Context cuda(Backend::cuda);
  std::printf("ew cuda:   %s\n", backend_status(Backend::cuda).detail.c_str());
  Arena arena;
  arena.bytes = std::size_t(8) << 30;
  arena.space = MemorySpace::device;
  Buffer<char> memory(cuda, arena.bytes, MemorySpace::device);
  arena.base = memory.data();
  fill(cuda, arena);

  std::vector<Runner> runners = {ew_runner(kokkos, arena), ew_runner(cuda, arena)};
  const int log2s[] = {20, 22, 24, 26, 28};
  std::printf("\n%-6s %-4s %6s %12s %12s %9s\n", "op", "type", "log2n", "kokkos GB/s", "cuda GB/s", "kokkos/cuda");
  double worst_goal = 1e9;
  std::string worst;
  for (Op op : all_ops)
    for (DType d : all_dtypes)
      for (int lg : log2s) {
        if (quick && lg != 28 && lg != 24) continue;
        const std::size_t n = std::size_t(1) << lg;
        const double bytes = double(info(op).bytes_per_element(d)) * double(n);
        std::vector<double> t = time_runners(runners, op, d, n, batch_for(op, d, n, 3000), quick ? 5 : 9);
        const double ratio = t[1] / t[0];
        std::printf("%-6s %-4s %6d %12.0f %12.0f %9.3f\n", to_string(op), to_string(d), lg, bytes / t[0] / 1e9,
                    bytes / t[1] / 1e9, ratio);
        csv.row(std::string("gpu,") + to_string(op) + "," + to_string(d) + "," + std::to_string(lg) + "," +
                std::to_string(bytes / t[0] / 1e9) + "," + std::to_string(bytes / t[1] / 1e9) + "," +
                std::to_string(ratio));
        if ((lg == 24 || lg == 28) && ratio < worst_goal)
          worst_goal = ratio, worst = std::string(to_string(op)) + " " + to_string(d) + " 2^" + std::to_string(lg);
      }
  std::printf("\nlowest kokkos/cuda at 2^24 and 2^28: %.3f (%s); goal >= 0.90, add f32 2^28 goal >= 0.95\n",
              worst_goal, worst.c_str());
  return 0;
}

int cpu_section(Context& kokkos, bool quick, Csv& csv) {
  Arena arena;
  arena.bytes = std::size_t(2) << 30;
  arena.space = MemorySpace::host;
  std::unique_ptr<char, decltype(&std::free)> memory(static_cast<char*>(std::aligned_alloc(4096, arena.bytes)), &std::free);
  if (!memory) {
    std::printf("CPU: no memory for a 2 GiB arena\n");
    return 1;
  }
  arena.base = memory.get();
  fill(kokkos, arena);

  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<Runner> runners = {ew_runner(kokkos, arena)};
  if (backend_status(Backend::highway).usable) {
    contexts.push_back(std::make_unique<Context>(Backend::highway));
    runners.push_back(ew_runner(*contexts.back(), arena));
    std::printf("ew highway: %s\n", backend_status(Backend::highway).detail.c_str());
  } else {
    std::printf("ew highway: unusable (%s)\n", backend_status(Backend::highway).reason.c_str());
  }
#ifdef EW_BENCH_CPU_PEERS
  static const std::vector<bench::Peer> peers = bench::cpu_peers();
  for (const bench::Peer& p : peers)
    if (std::string(p.name) == "openmp loop") runners.push_back(peer_runner(p, arena));
#endif
  std::printf("\n%-6s %-4s %6s", "op", "type", "log2n");
  for (auto& r : runners) std::printf(" %14s", (r.name + " GB/s").c_str());
  for (std::size_t r = 1; r < runners.size(); ++r) std::printf(" %16s", ("kokkos/" + runners[r].name).c_str());
  std::printf("\n");
  const Op ops[] = {Op::add, Op::triad, Op::copy};
  for (Op op : ops)
    for (DType d : all_dtypes) {
      if (quick && (op != Op::add || d != DType::f32)) continue;
      const int lg = 25;
      const std::size_t n = std::size_t(1) << lg;
      const double bytes = double(info(op).bytes_per_element(d)) * double(n);
      std::vector<double> t = time_runners(runners, op, d, n, 5, quick ? 5 : 11);
      std::printf("%-6s %-4s %6d", to_string(op), to_string(d), lg);
      for (double x : t) std::printf(" %14.1f", bytes / x / 1e9);
      for (std::size_t r = 1; r < runners.size(); ++r) std::printf(" %16.3f", t[r] / t[0]);
      std::printf("\n");
      std::string row = std::string("cpu,") + to_string(op) + "," + to_string(d) + "," + std::to_string(lg);
      for (std::size_t r = 0; r < runners.size(); ++r) row += "," + runners[r].name + "," + std::to_string(bytes / t[r] / 1e9);
      csv.row(row);
    }
  std::printf("\ngoal: kokkos add f32 2^25 >= 0.80x highway\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  bool quick = false;
  Csv csv;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv.file.open(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  const BackendStatus status = backend_status(Backend::kokkos);
  if (!status.usable) {
    std::printf("kokkos backend unusable: %s\n", status.reason.c_str());
    return 1;
  }
  std::printf("ew kokkos: %s\n", status.detail.c_str());
  Context kokkos(Backend::kokkos);
  return kokkos.device() >= 0 ? gpu_section(kokkos, quick, csv) : cpu_section(kokkos, quick, csv);
} catch (const std::exception& e) {
  std::fprintf(stderr, "ew-kokkos-bench: %s\n", e.what());
  return 1;
}
