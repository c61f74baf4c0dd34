// ew-cuda-bench: the cuda backend beside its peers, in one run on one GPU.
//   1. the GPU, its spec bandwidth (memory clock x bus width x 2) and a 1 GiB
//      device-to-device cudaMemcpy;
//   2. every op x dtype (f32, f64, f16, bf16) x n in {2^20, 2^22, ..., 2^28}: ew vs
//      cub::DeviceTransform, and axpy/copy vs cuBLAS for n >= 2^24 (cold cache: operands
//      rotate through an arena many times the L2, so no call finds its data in L2); then
//      the elements per second of f16 and bf16 over f32's;
//   3. the kernels under other policies (per-thread vector loads or bulk copies, tile
//      sizes, dependent launch) beside cub, to show why the product's was chosen;
//   4. time per call for n <= 2^16 vs an empty kernel launch (back to back, warm);
//   5. host-resident add of 512 MiB arrays: pinned vs the transfer floor, pageable vs
//      the sequential cudaMemcpy-kernel-cudaMemcpy path.
// Device timings use CUDA events on the context's stream: the median over batches of
// back-to-back calls. Usage: ew-cuda-bench [--quick] [--tune] [--tiles] [--csv FILE]
// (--tune: only sections 1, 3 and 5, at 2^24-2^28, with more batches: for comparing
// policies and pipeline shapes in one short run; --tiles: only bulk-copy tile sizes
// around cub's rule at 2^20-2^24).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "arena.hpp"
#include "bulk_tiles.hpp"
#include "event_timer.hpp"
#include "ew/ew.hpp"
#include "ew_internal/convert_eval.hpp"
#include "kernel_variants.cuh"
#include "peers.hpp"
#include "pipeline.hpp"

namespace {

using namespace ew;
using ew::bench::Arena;
using ew::bench::check;
using ew::bench::EventTimer;
using ew::bench::median;
namespace k = ew::detail::cuda;

struct Gpu {
  cudaDeviceProp prop{};
  int sm_count = 0;
  double spec_gbs = 0;
  std::size_t l2 = 0;
};

// Seconds per call: `batches` batches of `batch` back-to-back calls between two events;
// the median batch. call(j) gets the call's number j (0, 1, ...), two warm-up calls first.
double time_calls(cudaStream_t stream, const std::function<void(long)>& call, int batch, int batches) {
  EventTimer timer(stream);
  long j = 0;
  for (int w = 0; w < 2; ++w) call(j++);
  std::vector<double> per_call;
  for (int b = 0; b < batches; ++b) per_call.push_back(timer.seconds_per_call([&] { call(j++); }, batch));
  return median(per_call);
}

double wall_seconds(const std::function<void()>& f, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(t);
}

// Floats in [1, 2) (finite, never zero) whose 16-bit halves are also normal numbers in
// [1/128, 2) as f16 and as bf16, so that the arena serves every dtype.
__global__ void fill_kernel(std::uint32_t* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ unsigned(i >> 32);
    p[i] = 0x3F800000u | (h >> 25) << 16 | 0x3C00u | (h >> 9 & 0x3FFu);
  }
}

__global__ void empty_kernel() {}

int batch_for(double bytes_per_call, double gbs_guess) {
  const double seconds = bytes_per_call / (gbs_guess * 1e9);
  return std::clamp(int(2e-3 / seconds), 3, 200);
}

struct Csv {
  std::ofstream file;
  void row(const std::string& line) {
    if (file) file << line << "\n";
  }
};

// The bytes in flight per SM that the expressions' bulk tiles are sized for on this GPU
// (bulk_tiles.hpp; main sets it): the fixed ops keep cub's 48 KiB, and "bulk rule pdl"
// measures the rule on them.
std::size_t device_bulk_target = k::kBulkBytesInFlightPerSm;

// A policy of the kernels: the per-thread vector kernel (4 loads in flight,
// evict-first), the bulk-copy kernel (one tile per block) with element or bulk stores,
// or the persistent bulk-copy ring (2 shared-memory stages per block). Tiles hold
// `fixed_tile` vectors, or (0) the product's tile, sized by cub::DeviceTransform's rule, or
// (-1) sized for the device's bytes in flight (bulk_tiles.hpp, the expressions' rule);
// `ring_blocks_per_sm` caps the ring's resident blocks (0: as many as fit).
enum class Engine { vector, bulk, bulk_store, ring, ring_store };

template <Op op, class T, Engine engine, int fixed_tile, int ring_blocks_per_sm>
void launch_policy(std::size_t n, const void* a, const void* b, void* out, double s, double t, cudaStream_t stream,
                   int sm_count, bool dependent_launch) {
  auto p = k::make_stream_args<T>(n, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out),
                                  compute_t<T>(s), compute_t<T>(t));
  if constexpr (engine == Engine::vector) {
    auto kernel = k::stream_kernel<op, T, 4, true, k::Hint::streaming>;
    static int occupancy = 0;
    if (!occupancy) check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, kernel, k::kThreads, 0), "occupancy");
    check(k::launch_kernel(kernel, k::grid_blocks(p.vectors, std::uint64_t(occupancy) * sm_count), 0, stream,
                           dependent_launch, p),
          "stream launch");
    return;
  }
  static int tile = fixed_tile;
  if (tile <= 0)
    check(k::bulk_tile_for<op, T>(tile == 0 ? k::kBulkBytesInFlightPerSm : device_bulk_target, tile), "bulk tile");
  if constexpr (engine == Engine::bulk || engine == Engine::bulk_store) {
    using Store = std::conditional_t<engine == Engine::bulk, k::ElementStore, k::BulkStore>;
    check(k::launch_kernel(k::bulk_kernel<op, T, Store>, k::bulk_blocks(p.vectors, tile),
                           k::bulk_shared_bytes<op>(tile), stream, dependent_launch, p, tile),
          "bulk launch");
  } else {
    using Store = std::conditional_t<engine == Engine::ring, k::ElementStore, k::BulkStore>;
    auto kernel = k::bulk_ring_kernel<op, T, 2, Store>;
    const std::size_t shared = 2 * k::bulk_shared_bytes<op>(tile);
    static int occupancy = 0;
    if (!occupancy) {
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, kernel, k::kThreads, shared), "occupancy");
      if (ring_blocks_per_sm) occupancy = std::min(occupancy, ring_blocks_per_sm);
    }
    const unsigned blocks =
        unsigned(std::min<std::uint64_t>(k::bulk_blocks(p.vectors, tile), std::uint64_t(occupancy) * sm_count));
    check(k::launch_kernel(kernel, blocks, shared, stream, dependent_launch, p, tile), "ring launch");
  }
}

struct Policy {
  const char* name;
  void (*launch)(std::size_t, const void*, const void*, void*, double, double, cudaStream_t, int, bool);
  bool dependent_launch;
};

// "bulk pdl" is the product's large-array kernel; "bulk rule pdl" has tiles for the
// device's bytes in flight (the expressions' rule: 69 KiB on an H200, 48 on an H100);
// "bulk" without "pdl" is a clone of cub's; "st": results leave through shared memory and
// one bulk store per tile;
// "ring": persistent grid, 2 stages (4/SM: 4 blocks per SM, cub's bytes in flight).
template <Op op, class T>
std::vector<Policy> policies() {
  return {{"vec4 cs pdl", &launch_policy<op, T, Engine::vector, 0, 0>, true},
          {"bulk pdl", &launch_policy<op, T, Engine::bulk, 0, 0>, true},
          {"bulk rule pdl", &launch_policy<op, T, Engine::bulk, -1, 0>, true},
          {"bulk", &launch_policy<op, T, Engine::bulk, 0, 0>, false},
          {"bulk st pdl", &launch_policy<op, T, Engine::bulk_store, 0, 0>, true},
          {"ring pdl", &launch_policy<op, T, Engine::ring, 0, 0>, true},
          {"ring 4/SM pdl", &launch_policy<op, T, Engine::ring, 0, 4>, true},
          {"ring st pdl", &launch_policy<op, T, Engine::ring_store, 0, 0>, true}};
}

// Bench-only alternatives to the product's pinned pipeline, which moves every byte with
// the copy engines: here the kernel itself reads the inputs or writes the output over
// PCIe (pinned memory is mapped into the GPU's address space), in the product's chunks
// over 2 streams with the same shrinking tail, or one kernel does it all.
enum class HostPath { kernel_writes_host, kernel_reads_host, kernel_only };

void run_host_path(HostPath path, std::size_t n, const float* a, const float* b, float* c, float* scratch,
                   const cudaStream_t (&streams)[k::kPipelineSlots], std::size_t chunk, int sm_count) {
  auto add = &launch_policy<Op::add, float, Engine::vector, 0, 0>;
  if (path == HostPath::kernel_only) {
    add(n, a, b, c, 0, 0, streams[0], sm_count, false);
    check(cudaStreamSynchronize(streams[0]), "kernel over host memory");
    return;
  }
  std::size_t i = 0;
  for (std::size_t offset = 0, count = 0; offset < n; offset += count, ++i) {
    count = k::next_chunk_elements(n - offset, chunk);
    const cudaStream_t st = streams[i % k::kPipelineSlots];
    float* sa = scratch + (i % k::kPipelineSlots) * k::kPipelineArrays * chunk;
    float *sb = sa + chunk, *sc = sb + chunk;
    const std::size_t bytes = count * sizeof(float);
    if (path == HostPath::kernel_writes_host) {
      check(cudaMemcpyAsync(sa, a + offset, bytes, cudaMemcpyHostToDevice, st), "memcpy");
      check(cudaMemcpyAsync(sb, b + offset, bytes, cudaMemcpyHostToDevice, st), "memcpy");
      add(count, sa, sb, c + offset, 0, 0, st, sm_count, false);
    } else {
      add(count, a + offset, b + offset, sc, 0, 0, st, sm_count, false);
      check(cudaMemcpyAsync(c + offset, sc, bytes, cudaMemcpyDeviceToHost, st), "memcpy");
    }
  }
  for (cudaStream_t st : streams) check(cudaStreamSynchronize(st), "host path");
}

// Tile sizes around cub's rule for the two-input ops (the rule gives 192 vectors for f32,
// 256 for f64): the expressions' rule for this GPU, half, double and four times, for `--tiles`.
template <Op op, class T>
std::vector<Policy> tile_policies() {
  constexpr int rule = sizeof(T) == 4 ? 192 : 256;
  return {{"bulk pdl", &launch_policy<op, T, Engine::bulk, 0, 0>, true},
          {"bulk rule pdl", &launch_policy<op, T, Engine::bulk, -1, 0>, true},
          {"tile/2 pdl", &launch_policy<op, T, Engine::bulk, rule / 2, 0>, true},
          {"tile*2 pdl", &launch_policy<op, T, Engine::bulk, rule * 2, 0>, true},
          {"tile*4 pdl", &launch_policy<op, T, Engine::bulk, rule * 4, 0>, true}};
}

}  // namespace

int main(int argc, char** argv) try {
  bool quick = false, tune = false, tiles = false;
  Csv csv;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--tune")) tune = true;
    else if (!std::strcmp(argv[i], "--tiles")) tune = tiles = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv.file.open(argv[++i]);
  }
  csv.row("section,op,dtype,log2n,impl,seconds,gbs,ratio");

  Context ctx(Backend::cuda);
  auto stream = static_cast<cudaStream_t>(ctx.native_stream());
  Gpu gpu;
  check(cudaGetDeviceProperties(&gpu.prop, ctx.device()), "cudaGetDeviceProperties");
  int clock_khz = 0, bus_bits = 0, l2 = 0, driver = 0, runtime = 0;
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, ctx.device()), "attr");
  check(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ctx.device()), "attr");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ctx.device()), "attr");
  check(cudaDeviceGetAttribute(&gpu.sm_count, cudaDevAttrMultiProcessorCount, ctx.device()), "attr");
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  gpu.spec_gbs = double(clock_khz) * 1e3 * bus_bits / 8 * 2 / 1e9;
  gpu.l2 = std::size_t(l2);
  device_bulk_target = k::default_bulk_bytes_in_flight(gpu.spec_gbs * 1e9, gpu.sm_count);
  std::printf("GPU: %s, %d SMs, L2 %.0f MiB, memory %d MHz x %d bit x 2 = spec %.0f GB/s, driver %d, runtime %d\n",
              gpu.prop.name, gpu.sm_count, l2 / 1048576.0, clock_khz / 1000, bus_bits, gpu.spec_gbs, driver, runtime);
  std::printf("ew cuda: %s\n", backend_status(Backend::cuda).detail.c_str());
  std::printf("bulk tiles: the fixed ops' for %zu KiB of inputs in flight per SM, the expressions' rule %zu KiB\n",
              k::kBulkBytesInFlightPerSm >> 10, device_bulk_target >> 10);

  // The arena: 8 GiB, so every operand set of every size rotates through memory many
  // times the L2 (the largest, f64 at 2^28 with 3 arrays, needs 6 GiB and is cold anyway).
  Arena arena;
  arena.bytes = std::size_t(8) << 30;
  Buffer<char> arena_buffer(ctx, arena.bytes);
  arena.base = arena_buffer.data();
  fill_kernel<<<gpu.sm_count * 8, 256, 0, stream>>>(reinterpret_cast<std::uint32_t*>(arena.base), arena.bytes / 4);
  check(cudaStreamSynchronize(stream), "fill");

  {  // device-to-device copy of 1 GiB, read + write counted
    const std::size_t bytes = std::size_t(1) << 30;
    double t = time_calls(stream, [&](long j) {
      char* src = arena.base + (j % 2) * 2 * bytes;
      check(cudaMemcpyAsync(src + bytes, src, bytes, cudaMemcpyDeviceToDevice, stream), "memcpy");
    }, 5, 7);
    std::printf("device-to-device cudaMemcpy, 1 GiB: %.0f GB/s (%.1f%% of spec)\n\n", 2 * bytes / t / 1e9,
                100 * 2 * bytes / t / 1e9 / gpu.spec_gbs);
    csv.row("d2d,copy,bytes,30,cudaMemcpy," + std::to_string(t) + "," + std::to_string(2 * bytes / t / 1e9) + ",");
  }

  std::vector<bench::Peer> peers = bench::cuda_peers();
  const bench::Peer& cub = peers[0];
  const bench::Peer& cublas = peers[1];
  const int batches = quick ? 3 : tune ? 11 : 7;
  std::vector<int> logs = quick ? std::vector<int>{20, 24, 28} : std::vector<int>{20, 22, 24, 26, 28};

  auto ew_call = [&](Op op, DType d, std::size_t n, Arena::Ptrs p, double s, double t) {
    detail::dispatch_dtype(d, [&](auto tag) {
      using T = decltype(tag);
      Operands<T> args;
      args.a = Span<const T>(static_cast<const T*>(p.a), n, MemorySpace::device);
      if (info(op).input_streams == 2) args.b = Span<const T>(static_cast<const T*>(p.b), n, MemorySpace::device);
      args.out = Span<T>(static_cast<T*>(p.out), n, MemorySpace::device);
      args.s = compute_t<T>(s), args.t = compute_t<T>(t);
      run(ctx, op, args);
    });
  };
  constexpr DType bench_dtypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};
  std::map<std::tuple<Op, DType, int>, double> ew_seconds;  // for the 16-bit over f32 summary
  const double s = 0.5, t = 0.25;

  std::printf("Cold-cache GB/s (bytes of the op table), median of %d batches; ratio = ew / peer\n", batches);
  std::printf("%-6s %-4s %5s %9s %9s %7s %9s %7s\n", "op", "type", "log2n", "ew", "cub", "ew/cub", "cuBLAS", "ew/blas");
  for (const OpInfo& oi : op_table)
    for (DType d : bench_dtypes)
      for (int lg : logs) {
        if (tune) break;
        const std::size_t n = std::size_t(1) << lg;
        const double bytes = double(oi.bytes_per_element(d)) * n;
        const int batch = batch_for(bytes, gpu.spec_gbs * 0.8);
        const double t_ew = time_calls(stream, [&](long j) { ew_call(oi.op, d, n, arena.at(oi.op, n, d, j), s, t); },
                                       batch, batches);
        const double t_cub = time_calls(stream, [&](long j) {
          auto p = arena.at(oi.op, n, d, j);
          cub.run(oi.op, d, n, p.a, p.b, p.out, s, t, stream);
        }, batch, batches);
        ew_seconds[{oi.op, d, lg}] = t_ew;
        std::printf("%-6s %-4s %5d %9.0f %9.0f %7.3f", oi.name, to_string(d), lg, bytes / t_ew / 1e9,
                    bytes / t_cub / 1e9, t_cub / t_ew);
        csv.row(std::string("ops,") + oi.name + "," + to_string(d) + "," + std::to_string(lg) + ",ew," +
                std::to_string(t_ew) + "," + std::to_string(bytes / t_ew / 1e9) + ",");
        csv.row(std::string("ops,") + oi.name + "," + to_string(d) + "," + std::to_string(lg) + ",cub," +
                std::to_string(t_cub) + "," + std::to_string(bytes / t_cub / 1e9) + "," + std::to_string(t_cub / t_ew));
        if (cublas.supports(oi.op, d) && lg >= 24) {
          const double t_blas = time_calls(stream, [&](long j) {
            auto p = arena.at(oi.op, n, d, j);
            cublas.run(oi.op, d, n, p.a, p.b, p.out, s, t, stream);
          }, batch, batches);
          std::printf(" %9.0f %7.3f", bytes / t_blas / 1e9, t_blas / t_ew);
          csv.row(std::string("ops,") + oi.name + "," + to_string(d) + "," + std::to_string(lg) + ",cublas," +
                  std::to_string(t_blas) + "," + std::to_string(bytes / t_blas / 1e9) + "," +
                  std::to_string(t_blas / t_ew));
        }
        std::printf("\n");
      }
  if (!tune) {
    // Half the bytes per element: the goal is at least 1.9x f32's elements per second at 2^28.
    std::printf("\nElements per second of f16 and bf16 over f32's, same run (ew)\n");
    std::printf("%-6s %5s %7s %7s\n", "op", "log2n", "f16", "bf16");
    for (const OpInfo& oi : op_table)
      for (int lg : logs) {
        const double f32 = ew_seconds.at({oi.op, DType::f32, lg});
        const double f16 = f32 / ew_seconds.at({oi.op, DType::f16, lg}), bf16 = f32 / ew_seconds.at({oi.op, DType::bf16, lg});
        std::printf("%-6s %5d %7.3f %7.3f\n", oi.name, lg, f16, bf16);
        csv.row(std::string("ops16,") + oi.name + ",f16," + std::to_string(lg) + ",ew/f32,,," + std::to_string(f16));
        csv.row(std::string("ops16,") + oi.name + ",bf16," + std::to_string(lg) + ",ew/f32,,," + std::to_string(bf16));
      }
  }

  std::printf("\nKernel policies of backends/cuda/kernels.cuh, cold-cache GB/s, and each / cub::DeviceTransform in "
              "the same run (cub is timed before and after the policies: the ratio is to the mean, and cub2/cub1 "
              "shows the drift; vec4: per-thread vector kernel, 4 loads in flight, evict-first; bulk: bulk-copy "
              "tiles sized by cub's rule (the product; with st for 16-bit data); rule: tiles for the device's bytes in flight per SM as the expressions' (bulk_tiles.hpp); st: bulk stores; ring: persistent grid, 2 stages; pdl: "
              "dependent launch)\n");
  // Every policy must give the vector kernel's bits, at an odd size with a head.
  auto verify_policies = [&](Op op, DType d, const std::vector<Policy>& list) {
    for (const std::size_t n : {std::size_t(1003), (std::size_t(1) << 22) + 1003}) {
      // Every operand one element past a 256-byte boundary: the same head, so the aligned
      // instances apply.
      const std::size_t bytes = n * size_of(d), stride = (bytes + 511) / 256 * 256;
      char* a = arena.base + size_of(d);
      char* b = a + stride;
      char* y0 = b + stride;  // in-place ops: the y both runs start from
      char* want = y0 + stride;
      char* got = want + stride;
      std::vector<char> h_want(bytes), h_got(bytes);
      auto run_into = [&](const Policy& pol, char* out) {
        if (info(op).in_place) check(cudaMemcpyAsync(out, y0, bytes, cudaMemcpyDeviceToDevice, stream), "copy y");
        pol.launch(n, a, info(op).in_place ? out : b, out, s, t, stream, gpu.sm_count, pol.dependent_launch);
      };
      run_into(list[0], want);
      check(cudaMemcpyAsync(h_want.data(), want, bytes, cudaMemcpyDeviceToHost, stream), "copy back");
      check(cudaStreamSynchronize(stream), "copy back");
      for (const Policy& pol : list) {
        check(cudaMemsetAsync(got, 0xff, bytes, stream), "poison");
        run_into(pol, got);
        check(cudaMemcpyAsync(h_got.data(), got, bytes, cudaMemcpyDeviceToHost, stream), "copy back");
        check(cudaStreamSynchronize(stream), "copy back");
        if (std::memcmp(h_want.data(), h_got.data(), bytes) != 0)
          throw std::runtime_error(std::string("policy ") + pol.name + " differs from the vector kernel on " +
                                   to_string(op) + " " + to_string(d));
      }
    }
  };
  const std::vector<int> policy_logs =
      tiles ? std::vector<int>{20, 22, 24} : tune ? std::vector<int>{24, 26, 28} : logs;
  auto run_policies = [&](Op op, DType d, const std::vector<Policy>& list) {
    verify_policies(op, d, list);
    for (int lg : policy_logs) {
      const std::size_t n = std::size_t(1) << lg;
      const double bytes = double(info(op).bytes_per_element(d)) * n;
      const int batch = batch_for(bytes, gpu.spec_gbs * 0.8);
      auto time_cub = [&] {
        return time_calls(stream, [&](long j) {
          auto p = arena.at(op, n, d, j);
          cub.run(op, d, n, p.a, p.b, p.out, s, t, stream);
        }, batch, batches);
      };
      const double t_cub1 = time_cub();
      std::vector<double> t_pol;
      for (const Policy& pol : list)
        t_pol.push_back(time_calls(stream, [&](long j) {
          auto p = arena.at(op, n, d, j);
          pol.launch(n, p.a, p.b, p.out, s, t, stream, gpu.sm_count, pol.dependent_launch);
        }, batch, batches));
      const double t_cub2 = time_cub(), t_cub = (t_cub1 + t_cub2) / 2;
      std::printf("%-6s %-4s %5d %6.0f %5.3f", to_string(op), to_string(d), lg, bytes / t_cub / 1e9, t_cub1 / t_cub2);
      csv.row(std::string("policy,") + to_string(op) + "," + to_string(d) + "," + std::to_string(lg) + ",cub," +
              std::to_string(t_cub) + "," + std::to_string(bytes / t_cub / 1e9) + "," + std::to_string(t_cub1 / t_cub2));
      for (std::size_t i = 0; i < list.size(); ++i) {
        std::printf(" %11.0f %5.3f", bytes / t_pol[i] / 1e9, t_cub / t_pol[i]);
        csv.row(std::string("policy,") + to_string(op) + "," + to_string(d) + "," + std::to_string(lg) + "," +
                list[i].name + "," + std::to_string(t_pol[i]) + "," + std::to_string(bytes / t_pol[i] / 1e9) + "," +
                std::to_string(t_cub / t_pol[i]));
      }
      std::printf("\n");
    }
  };
  if (!tiles) {
    std::printf("%-16s %6s %5s", "", "cub", "drift");
    for (const Policy& p : policies<Op::add, float>()) std::printf(" %17s", p.name);
    std::printf("\n");
  }
  if (tiles) {
    std::printf("%-16s %6s %5s", "", "cub", "drift");
    for (const Policy& p : tile_policies<Op::add, float>()) std::printf(" %17s", p.name);
    std::printf("\n");
    run_policies(Op::add, DType::f32, tile_policies<Op::add, float>());
    run_policies(Op::add, DType::f64, tile_policies<Op::add, double>());
    run_policies(Op::triad, DType::f64, tile_policies<Op::triad, double>());
    run_policies(Op::axpy, DType::f64, tile_policies<Op::axpy, double>());
    run_policies(Op::axpby, DType::f64, tile_policies<Op::axpby, double>());
    return 0;
  }
  run_policies(Op::add, DType::f32, policies<Op::add, float>());
  run_policies(Op::add, DType::f64, policies<Op::add, double>());
  run_policies(Op::copy, DType::f32, policies<Op::copy, float>());
  run_policies(Op::copy, DType::f64, policies<Op::copy, double>());
  run_policies(Op::axpy, DType::f32, policies<Op::axpy, float>());
  run_policies(Op::axpy, DType::f64, policies<Op::axpy, double>());
  run_policies(Op::triad, DType::f32, policies<Op::triad, float>());
  run_policies(Op::axpby, DType::f32, policies<Op::axpby, float>());
  run_policies(Op::add, DType::bf16, policies<Op::add, bfloat16>());
  run_policies(Op::add, DType::f16, policies<Op::add, half>());
  run_policies(Op::triad, DType::bf16, policies<Op::triad, bfloat16>());
  run_policies(Op::axpy, DType::f16, policies<Op::axpy, half>());

  if (!tune) {
    std::printf("\nSmall n, warm, back to back: microseconds per call (ratio = call / empty launch)\n");
    const int batch = 2000;
    auto empty = [&] { return time_calls(stream, [&](long) { empty_kernel<<<1, 32, 0, stream>>>(); }, batch, batches); };
    // The host is a shared VM: each call is measured right after its own empty-launch baseline.
    for (int lg : {10, 12, 14, 16}) {
      const std::size_t n = std::size_t(1) << lg;
      for (Op op : {Op::add, Op::axpy}) {
        auto p = arena.at(op, n, DType::f32, 0);
        const double t_empty = empty();
        const double t_ew = time_calls(stream, [&](long) { ew_call(op, DType::f32, n, p, s, t); }, batch, batches);
        const double t_cub = time_calls(stream, [&](long) { cub.run(op, DType::f32, n, p.a, p.b, p.out, s, t, stream); },
                                        batch, batches);
        std::printf("%-5s f32 2^%d: empty launch %.2f us, ew %.2f us (%.3fx), cub %.2f us (%.3fx)\n", to_string(op), lg,
                    t_empty * 1e6, t_ew * 1e6, t_ew / t_empty, t_cub * 1e6, t_cub / t_empty);
        csv.row(std::string("small,") + to_string(op) + ",f32," + std::to_string(lg) + ",empty," +
                std::to_string(t_empty) + ",,");
        csv.row(std::string("small,") + to_string(op) + ",f32," + std::to_string(lg) + ",ew," + std::to_string(t_ew) +
                ",," + std::to_string(t_ew / t_empty));
        csv.row(std::string("small,") + to_string(op) + ",f32," + std::to_string(lg) + ",cub," + std::to_string(t_cub) +
                ",," + std::to_string(t_cub / t_empty));
      }
    }
  }
  arena_buffer = Buffer<char>(ctx, 0);  // room for the host-resident section

  std::printf("\nHost-resident add, 512 MiB per array (f32, n = 2^27), wall clock, median\n");
  {
    const std::size_t n = std::size_t(1) << 27, bytes = n * sizeof(float);
    const int reps = quick ? 3 : 5;
    Buffer<float> pa(ctx, n, MemorySpace::pinned), pb(ctx, n, MemorySpace::pinned), pc(ctx, n, MemorySpace::pinned);
    Buffer<float> da(ctx, n), db(ctx, n), dc(ctx, n);
    std::vector<float> ha(n), hb(n), hc(n);
    for (std::size_t i = 0; i < n; ++i) ha[i] = 1.0f + float(i % 1000), hb[i] = 0.5f * float(i % 777);
    std::memcpy(pa.data(), ha.data(), bytes);
    std::memcpy(pb.data(), hb.data(), bytes);
    auto verify = [&](const float* c, const char* what) {
      for (std::size_t i = 0; i < n; i += 4099)
        if (c[i] != ha[i] + hb[i]) throw std::runtime_error(std::string(what) + ": wrong result at " + std::to_string(i));
    };

    // Staging sizes of the pipeline (the default is the product's), through the public
    // API. Rounds interleave them and the rate measurements, so that a drift of the
    // host's transfer rates hits all alike.
    struct Staging {
      const char* name;
      std::size_t mib;  // 0: the default
    };
    const std::vector<Staging> stagings = {{"default (16 MiB chunks)", 0}, {"48 MiB (8 MiB chunks)", 48},
                                           {"168 MiB (28 MiB chunks)", 168}};
    std::vector<std::unique_ptr<Context>> pipes;
    for (const Staging& st : stagings) {
      ContextOptions o;
      o.staging_bytes = st.mib << 20;
      pipes.push_back(std::make_unique<Context>(Backend::cuda, o));
    }
    auto pinned_call = [&](Context& c) {
      add<float>(c, pa, pb, pc);
      c.synchronize();
    };
    auto pageable_call = [&](Context& c) {
      add<float>(c, Span<const float>(ha.data(), n), Span<const float>(hb.data(), n), Span<float>(hc.data(), n));
      c.synchronize();
    };
    for (auto& pipe : pipes) pinned_call(*pipe);  // allocates scratch
    const int rounds = quick ? 3 : tune ? 9 : 11;
    struct NamedPath {
      const char* name;
      HostPath path;
    };
    const std::vector<NamedPath> host_paths = {{"H2D copies, kernel writes host", HostPath::kernel_writes_host},
                                               {"kernel reads host, D2H copies", HostPath::kernel_reads_host},
                                               {"one kernel reads and writes host", HostPath::kernel_only}};
    const std::size_t path_chunk = k::pipeline_chunk_bytes(k::kDefaultStagingBytes) / sizeof(float);
    Buffer<float> path_scratch(ctx, k::kPipelineSlots * k::kPipelineArrays * path_chunk);
    cudaStream_t path_streams[k::kPipelineSlots];
    for (cudaStream_t& st : path_streams) check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
    std::vector<std::vector<double>> host_path_s(host_paths.size());
    std::vector<double> both_h2d_s, both_d2h_s;
    std::vector<double> h2d_s, d2h_s;
    std::vector<std::vector<double>> pinned_s(stagings.size()), pageable_s(stagings.size());
    auto timed = [](const std::function<void()>& f) { return wall_seconds(f, 1); };
    for (int r = 0; r < rounds; ++r) {
      h2d_s.push_back(timed([&] {
        check(cudaMemcpyAsync(da.data(), pa.data(), bytes, cudaMemcpyHostToDevice, stream), "memcpy");
        check(cudaStreamSynchronize(stream), "sync");
      }));
      d2h_s.push_back(timed([&] {
        check(cudaMemcpyAsync(pc.data(), dc.data(), bytes, cudaMemcpyDeviceToHost, stream), "memcpy");
        check(cudaStreamSynchronize(stream), "sync");
      }));
      for (std::size_t v = 0; v < stagings.size(); ++v) {
        std::memset(pc.data(), 0, bytes);
        pinned_s[v].push_back(timed([&] { pinned_call(*pipes[v]); }));
        verify(pc.data(), "pinned");
      }
      for (std::size_t v = 0; v < host_paths.size(); ++v) {
        std::memset(pc.data(), 0, bytes);
        host_path_s[v].push_back(timed([&] {
          run_host_path(host_paths[v].path, n, pa.data(), pb.data(), pc.data(), path_scratch.data(), path_streams,
                        path_chunk, gpu.sm_count);
        }));
        verify(pc.data(), host_paths[v].name);
      }
      {  // both directions at once, 512 MiB each, each timed on its own stream
        cudaEvent_t e[3];
        for (auto& ev : e) check(cudaEventCreate(&ev), "cudaEventCreate");
        check(cudaEventRecord(e[0], stream), "cudaEventRecord");
        for (cudaStream_t st : path_streams) check(cudaStreamWaitEvent(st, e[0], 0), "cudaStreamWaitEvent");
        check(cudaMemcpyAsync(da.data(), pa.data(), bytes, cudaMemcpyHostToDevice, path_streams[0]), "memcpy");
        check(cudaMemcpyAsync(pc.data(), dc.data(), bytes, cudaMemcpyDeviceToHost, path_streams[1]), "memcpy");
        check(cudaEventRecord(e[1], path_streams[0]), "cudaEventRecord");
        check(cudaEventRecord(e[2], path_streams[1]), "cudaEventRecord");
        check(cudaEventSynchronize(e[1]), "sync");
        check(cudaEventSynchronize(e[2]), "sync");
        float ms_h2d = 0, ms_d2h = 0;
        check(cudaEventElapsedTime(&ms_h2d, e[0], e[1]), "elapsed");
        check(cudaEventElapsedTime(&ms_d2h, e[0], e[2]), "elapsed");
        both_h2d_s.push_back(ms_h2d * 1e-3);
        both_d2h_s.push_back(ms_d2h * 1e-3);
        for (auto& ev : e) cudaEventDestroy(ev);
      }
    }
    // The host side of the pageable path: the copy team's rate into and out of pinned
    // memory, with ordinary and with streaming stores (the product uses streaming).
    {
      const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
      for (const bool streaming : {false, true}) {
        k::CopyTeam team(threads, streaming);
        const std::vector<k::CopyTeam::Segment> in = {{pa.data(), ha.data(), bytes}}, out = {{hc.data(), pc.data(), bytes}};
        const double t_in = wall_seconds([&] { team.copy(in); }, 5), t_out = wall_seconds([&] { team.copy(out); }, 5);
        std::printf("copy team, %d threads, %s stores: pageable to pinned %.1f GB/s, pinned to pageable %.1f GB/s\n",
                    threads, streaming ? "streaming" : "ordinary", bytes / t_in / 1e9, bytes / t_out / 1e9);
        csv.row(std::string("host,copy,bytes,29,team ") + (streaming ? "streaming" : "ordinary") + " in," +
                std::to_string(t_in) + "," + std::to_string(bytes / t_in / 1e9) + ",");
        csv.row(std::string("host,copy,bytes,29,team ") + (streaming ? "streaming" : "ordinary") + " out," +
                std::to_string(t_out) + "," + std::to_string(bytes / t_out / 1e9) + ",");
      }
    }
    for (int r = 0; r < (quick ? 3 : 5); ++r)
      for (std::size_t v = 0; v < stagings.size(); ++v) {
        std::fill(hc.begin(), hc.end(), 0.0f);
        pageable_s[v].push_back(timed([&] { pageable_call(*pipes[v]); }));
        verify(hc.data(), "pageable");
      }
    const double h2d = bytes / median(h2d_s) / 1e9, d2h = bytes / median(d2h_s) / 1e9;
    const double floor_s = std::max(2.0 * bytes / (h2d * 1e9), bytes / (d2h * 1e9));
    std::printf("pinned H2D %.1f GB/s, D2H %.1f GB/s (medians of %d): floor max(2N*4 B / H2D, N*4 B / D2H) = %.2f ms\n",
                h2d, d2h, rounds, floor_s * 1e3);
    for (std::size_t v = 0; v < stagings.size(); ++v) {
      const double tp = median(pinned_s[v]), tq = median(pageable_s[v]);
      std::printf("staging %s: pinned %.2f ms = %.3fx the floor, pageable %.2f ms\n", stagings[v].name, tp * 1e3,
                  floor_s / tp, tq * 1e3);
      csv.row("host,add,f32,27,ew pinned staging " + std::to_string(stagings[v].mib) + "," + std::to_string(tp) + ",," +
              std::to_string(floor_s / tp));
      csv.row("host,add,f32,27,ew pageable staging " + std::to_string(stagings[v].mib) + "," + std::to_string(tq) + ",,");
    }
    std::printf("H2D and D2H of 512 MiB at once: H2D %.1f GB/s, D2H %.1f GB/s (medians)\n",
                bytes / median(both_h2d_s) / 1e9, bytes / median(both_d2h_s) / 1e9);
    csv.row("host,copy,bytes,29,H2D beside D2H," + std::to_string(median(both_h2d_s)) + "," +
            std::to_string(bytes / median(both_h2d_s) / 1e9) + ",");
    csv.row("host,copy,bytes,29,D2H beside H2D," + std::to_string(median(both_d2h_s)) + "," +
            std::to_string(bytes / median(both_d2h_s) / 1e9) + ",");
    for (std::size_t v = 0; v < host_paths.size(); ++v) {
      const double tv = median(host_path_s[v]);
      std::printf("bench-only path, %s: pinned %.2f ms = %.3fx the floor\n", host_paths[v].name, tv * 1e3,
                  floor_s / tv);
      csv.row(std::string("host,add,f32,27,") + host_paths[v].name + "," + std::to_string(tv) + ",," +
              std::to_string(floor_s / tv));
    }
    for (cudaStream_t st : path_streams) cudaStreamDestroy(st);
    const double t_pinned = median(pinned_s[0]), t_pageable = median(pageable_s[0]);
    const double t_seq = wall_seconds([&] {
      check(cudaMemcpy(da.data(), ha.data(), bytes, cudaMemcpyHostToDevice), "memcpy");
      check(cudaMemcpy(db.data(), hb.data(), bytes, cudaMemcpyHostToDevice), "memcpy");
      add<float>(ctx, da, db, dc);
      ctx.synchronize();
      check(cudaMemcpy(hc.data(), dc.data(), bytes, cudaMemcpyDeviceToHost), "memcpy");
    }, reps);
    std::printf("pinned through ew: %.2f ms = %.3fx the floor (goal >= 0.95)\n", t_pinned * 1e3, floor_s / t_pinned);
    std::printf("pageable sequential cudaMemcpy-kernel-cudaMemcpy: %.2f ms\n", t_seq * 1e3);
    std::printf("pageable through ew: %.2f ms = %.2fx faster than sequential (goal >= 4)\n", t_pageable * 1e3,
                t_seq / t_pageable);
    csv.row("host,add,f32,27,floor," + std::to_string(floor_s) + ",,");
    csv.row("host,add,f32,27,ew pinned," + std::to_string(t_pinned) + ",," + std::to_string(floor_s / t_pinned));
    csv.row("host,add,f32,27,sequential pageable," + std::to_string(t_seq) + ",,");
    csv.row("host,add,f32,27,ew pageable," + std::to_string(t_pageable) + ",," + std::to_string(t_seq / t_pageable));
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "ew-cuda-bench: %s\n", e.what());
  return 1;
}
