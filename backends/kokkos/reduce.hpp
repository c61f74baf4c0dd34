#pragma once
// Reductions on any Kokkos execution space, by the plan's tree (ew_internal/reduce_plan.hpp):
// the bits are the scalar backend's by construction.
//
// Host spaces: one parallel_for over the plan's blocks, each block by the plan's reference
// code, its partials into a view, combined on the host by the plan's tree.
//
// Cuda, the sums (sum, asum, dot, norm2): one thread a block read memory 8 KiB apart from
// its neighbours (far from the bus's speed). There a warp takes a plan block at a time:
// lane j adds the block's plan lane j (its elements j, j + 32, ... in order), so that the
// warp reads each row of 32 elements in one coalesced access, 16 rows loaded before their
// adds; the lane tree by xor shuffles (a butterfly over aligned lane pairs: both lanes of a
// pair add the same two values, so every lane ends with the canonical tree's node, and
// lane 0 writes the block's partials). A second launch folds aligned runs of 32 partials
// the same way into their tree nodes, past the array's end a left node standing alone as
// the canonical tree has it; the host combines the runs' nodes by the tree (every aligned
// power-of-two run of blocks is a node of it: the same root).
// On an H200 the sums read 0.89-0.98x the cuda backend's speed at 2^24..2^28 (0.04-0.25x one
// thread a block; bench/cuda/results/h200-2026-11-27-kokkos-reduce), on an H100 0.93-1.00x.
//
// Cuda, min/max: order-free (plan::beats is a total order), so every thread reads the
// array in grid-stride order (16-bit data as 16-byte vectors), a warp's winner by shuffles, a
// second launch the winner of each run of 32 warps, the host the winner of the runs
// (run_extremum_on_warps): at 2^26..2^28 0.91-1.00x the cuda backend in f32 and f64 on an
// H100 and an H200 (0.14-0.34x one thread a block on the H100;
// bench/cuda/results/h100-h200-2026-11-27-kokkos-extrema), 0.94-1.00x in 16-bit data on an H200
// since each kernel's grid is what its registers keep resident (WarpGrid; 0.81-0.90x with a late
// second wave; bench/cuda/results/h200-2026-11-28-kokkos-grids).
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda_check.hpp"
#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "resident_grid.hpp"

namespace ew::detail::kokkos {

template <class T, class Exec>
ReduceResult run_reduce_typed(const Exec& exec, const ReduceCall& c) {
  using Space = typename Exec::memory_space;
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  const T* x = static_cast<const T*>(c.x);
  const T* y = static_cast<const T*>(c.y);
  const std::size_t n = c.n;
  const std::int64_t blocks = static_cast<std::int64_t>(plan::block_count(n));
  if (c.kind == plan::Kind::min || c.kind == plan::Kind::max) {
    const bool is_min = c.kind == plan::Kind::min;
    Kokkos::View<double*, Space> values("ew::reduce values", blocks);
    Kokkos::View<std::uint64_t*, Space> indices("ew::reduce indices", blocks);
    Kokkos::parallel_for(
        "ew::reduce extrema", Policy(exec, 0, blocks), KOKKOS_LAMBDA(std::int64_t b) {
          const std::size_t begin = static_cast<std::size_t>(b) * plan::block_elements;
          const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
          std::uint64_t at = 0;
          plan::reference_extremum(is_min, x + begin, count, &values(b), &at);
          indices(b) = at + begin;
        });
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
    auto k = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), indices);
    ReduceResult best{v(0), k(0)};
    for (std::int64_t b = 1; b < blocks; ++b)
      if (plan::beats(is_min, v(b), k(b), best.value, best.index)) best = {v(b), k(b)};
    return best;
  }
  const bool f64 = sizeof(T) == 8;
  const int w = plan::width(c.kind, f64);
  const plan::Kind kind = c.kind;
  Kokkos::View<double*, Space> partials("ew::reduce partials", blocks * w);
  Kokkos::parallel_for(
      "ew::reduce partials", Policy(exec, 0, blocks), KOKKOS_LAMBDA(std::int64_t b) {
        const std::size_t begin = static_cast<std::size_t>(b) * plan::block_elements;
        const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
        plan::reference_partials<T>(kind, x + begin, y ? y + begin : nullptr, count, &partials(b * w));
      });
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), partials);
  if (c.node) return {plan::pair_tree(host.data(), static_cast<std::size_t>(blocks)), 0};
  return {plan::finish_partials(kind, f64, host.data(), static_cast<std::size_t>(blocks)), 0};
}

#if defined(KOKKOS_ENABLE_CUDA)
// Memory that a context's reductions reuse (an allocation would wait for the device every
// call), grown as calls need, with CUDA's allocators (not Views: a context may outlive
// Kokkos::finalize): the blocks' partials in device memory; the runs' nodes in pinned host
// memory mapped into the device's address space, which the fold writes and the host reads
// once the stream is synchronized (no copy after the kernels).
class ReduceScratch {
 public:
  ReduceScratch() = default;
  ReduceScratch(const ReduceScratch&) = delete;
  ReduceScratch& operator=(const ReduceScratch&) = delete;
  // Under unified addressing cudaFree and cudaFreeHost find an allocation's device themselves.
  ~ReduceScratch() {
    if (partials_.at && cudaFree(partials_.at) != cudaSuccess) cudaGetLastError();
    if (nodes_.at && cudaFreeHost(nodes_.at) != cudaSuccess) cudaGetLastError();
  }
  // At least `doubles` doubles of device memory on the context's GPU (the call's: the backend
  // runs it with Kokkos' GPU current).
  double* partials(std::size_t doubles) {
    return grow(partials_, doubles, "device memory for a reduction's partials",
                [](void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }, cudaFree);
  }
  // At least `doubles` doubles of mapped pinned memory: the host's pointer; `on_device` the
  // device's for the same bytes.
  double* nodes(std::size_t doubles, double** on_device) {
    if (doubles > nodes_.capacity) {
      grow(nodes_, doubles, "pinned memory for a reduction's nodes",
           [](void** p, std::size_t bytes) { return cudaHostAlloc(p, bytes, cudaHostAllocMapped); }, cudaFreeHost);
      void* device = nullptr;
      check_cuda(cudaHostGetDevicePointer(&device, nodes_.at, 0), "cudaHostGetDevicePointer");
      nodes_device_ = static_cast<double*>(device);
    }
    *on_device = nodes_device_;
    return nodes_.at;
  }

 private:
  struct Held {
    double* at = nullptr;
    std::size_t capacity = 0;
  };
  template <class Alloc, class Free>
  static double* grow(Held& h, std::size_t doubles, const char* what, Alloc alloc, Free release) {
    if (doubles <= h.capacity) return h.at;
    if (h.at && release(h.at) != cudaSuccess) cudaGetLastError();
    h = Held{};
    void* p = nullptr;
    const cudaError_t e = alloc(&p, doubles * sizeof(double));
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw Error(Errc::out_of_memory, "kokkos backend: " + std::to_string(doubles * sizeof(double)) + " bytes of " +
                                           what + ": " + cudaGetErrorString(e));
    }
    h.at = static_cast<double*>(p), h.capacity = doubles;
    return h.at;
  }
  Held partials_, nodes_;
  double* nodes_device_ = nullptr;  // nodes_.at in the device's address space
};

constexpr int warp_lanes = 32;
static_assert(warp_lanes == plan::lanes, "a warp's lanes are the plan's lanes");
constexpr int rows_ahead = 16;  // rows a lane loads before it adds them
static_assert(plan::block_elements / warp_lanes % rows_ahead == 0, "a block's rows in whole batches");

// The element as the kernels compute with it: float for 16-bit and f32 data, double for f64.
template <class T>
using widened_t = std::conditional_t<sizeof(T) == 8, double, float>;

// 16-bit data widened on the device by the hardware, exactly: ew::half's own widening is
// integer code, a loop for subnormals, and held 16-bit min/max to the issue rate, far below
// the cuda backend. A NaN stays NaN but may lose its payload, which no result shows: the
// sums' NaN results are the default NaN (plan::finish_partials), and min/max read the
// winner's value again.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION widened_t<T> widened(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, half>) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
    return f;
  }
  if constexpr (std::is_same_v<T, bfloat16>) return __uint_as_float(static_cast<unsigned>(v.bits) << 16);
#endif
  return static_cast<widened_t<T>>(static_cast<double>(v));
}

// Block b's partials (w of them), a warp each, warps in grid-stride order over the blocks.
template <plan::Kind K, class T>
struct WarpBlocks {
  static constexpr int w = plan::width(K, sizeof(T) == 8);
  // The f64 2-norm's three accumulators take 57 registers (4 blocks of 256); the others 32.
  static constexpr int resident_blocks = w == 3 ? 4 : 8;
  const T* x;
  const T* y;
  std::size_t n, blocks;
  std::int64_t warps;
  double* partials;

  KOKKOS_FORCEINLINE_FUNCTION static void add_term(double* acc, double v, double u) {
    if constexpr (K == plan::Kind::sum) acc[0] = plan::add(acc[0], plan::term_sum(v));
    else if constexpr (K == plan::Kind::asum) acc[0] = plan::add(acc[0], plan::term_asum(v));
    else if constexpr (K == plan::Kind::dot) acc[0] = plan::add(acc[0], plan::term_dot(v, u));
    else if constexpr (w == 1) acc[0] = plan::add(acc[0], plan::term_square(v));
    else {  // every accumulator adds, +0 to the other two, as reference_partials does
      const int cls = plan::norm2_class(v);
      for (int c = 0; c < 3; ++c) acc[c] = plan::add(acc[c], cls == c ? plan::norm2_term(v, c) : 0.0);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const {
#if defined(__CUDA_ARCH__)
    const int lane = static_cast<int>(t % warp_lanes);
    constexpr int rows = static_cast<int>(plan::block_elements) / warp_lanes;
    for (std::size_t b = static_cast<std::size_t>(t / warp_lanes); b < blocks; b += static_cast<std::size_t>(warps)) {
      const std::size_t begin = b * plan::block_elements;
      const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
      const T* xb = x + begin + lane;
      const T* yb = K == plan::Kind::dot ? y + begin + lane : nullptr;
      double acc[3] = {0.0, 0.0, 0.0};
      if (count == plan::block_elements) {
        for (int r0 = 0; r0 < rows; r0 += rows_ahead) {
          T v[rows_ahead], u[rows_ahead];
#pragma unroll
          for (int k = 0; k < rows_ahead; ++k) {
            v[k] = xb[(r0 + k) * warp_lanes];
            if constexpr (K == plan::Kind::dot) u[k] = yb[(r0 + k) * warp_lanes];
          }
#pragma unroll
          for (int k = 0; k < rows_ahead; ++k)
            add_term(acc, widened(v[k]), K == plan::Kind::dot ? widened(u[k]) : widened_t<T>(0));
        }
      } else {
        for (std::size_t i = static_cast<std::size_t>(lane); i < count; i += warp_lanes)
          add_term(acc, widened(x[begin + i]), K == plan::Kind::dot ? widened(y[begin + i]) : widened_t<T>(0));
      }
      for (int c = 0; c < w; ++c)
        for (int s = 1; s < warp_lanes; s <<= 1) acc[c] = plan::add(acc[c], __shfl_xor_sync(0xffffffffu, acc[c], s));
      if (lane == 0)
        for (int c = 0; c < w; ++c) partials[b * w + c] = acc[c];
    }
#else
    (void)t;
#endif
  }
};

// The node of each aligned run of 32 partials, a warp a run.
struct WarpRuns {
  static constexpr int resident_blocks = 8;
  const double* partials;
  double* nodes;
  std::size_t blocks, runs;
  std::int64_t warps;
  int w;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const {
#if defined(__CUDA_ARCH__)
    const int lane = static_cast<int>(t % warp_lanes);
    for (std::size_t r = static_cast<std::size_t>(t / warp_lanes); r < runs; r += static_cast<std::size_t>(warps)) {
      const std::size_t i = r * warp_lanes + lane;
      for (int c = 0; c < w; ++c) {
        bool present = i < blocks;
        double v = present ? partials[i * w + c] : 0.0;
        for (int s = 1; s < warp_lanes; s <<= 1) {
          const double other = __shfl_xor_sync(0xffffffffu, v, s);
          const bool other_present = __shfl_xor_sync(0xffffffffu, present ? 1 : 0, s) != 0;
          const bool left = (lane & s) == 0;
          const double l = left ? v : other, right = left ? other : v;
          // A cut range's right child may cover nothing: the left node then stands alone.
          v = (left ? other_present : present) ? plan::add(l, right) : l;
          present = left ? present : other_present;
        }
        if (lane == 0) nodes[r * w + c] = v;
      }
    }
#else
    (void)t;
#endif
  }
};

// The warps a kernel F is launched with: the blocks of `block_threads` that its registers
// keep resident on an SM (F::resident_blocks, also its launch bounds), for every SM
// (resident_grid.hpp). `cap` (> 0: tests) caps every grid instead, whose warps then take
// several blocks and runs in turn.
struct WarpGrid {
  static constexpr int block_threads = 256;
  const Kokkos::Cuda& exec;
  std::int64_t cap;

  template <class F>
  std::int64_t warps() const {
    if (cap > 0) return cap;
    return std::max<std::int64_t>(1, resident_threads(exec, F::resident_blocks, block_threads) / warp_lanes);
  }
};

// The warps' lanes are the policy's indices t (lane t % 32 of warp t / 32): Kokkos launches
// a range on Cuda as blocks of (1, size, 1) threads, size a multiple of 32, from index 0, so
// that t % 32 is the hardware lane (the extrema's kernels rely on it too).
template <class F>
void launch_warps(const Kokkos::Cuda& exec, const char* name, std::int64_t warps, const F& f) {
  using Policy = Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>,
                                     Kokkos::LaunchBounds<WarpGrid::block_threads, F::resident_blocks>>;
  Kokkos::parallel_for(name, Policy(exec, 0, warps * warp_lanes), f);
}

template <plan::Kind K, class T>
ReduceResult run_sum_on_warps(const Kokkos::Cuda& exec, const ReduceCall& c, ReduceScratch& scratch,
                              const WarpGrid& grid) {
  using Walk = WarpBlocks<K, T>;
  constexpr int w = Walk::w;
  const std::size_t blocks = plan::block_count(c.n), runs = (blocks + warp_lanes - 1) / warp_lanes;
  double* const partials = scratch.partials(blocks * w);
  double* nodes = nullptr;
  const double* const host_nodes = scratch.nodes(runs * w, &nodes);
  const std::int64_t block_warps = std::min<std::int64_t>(static_cast<std::int64_t>(blocks), grid.warps<Walk>());
  const Walk walk{static_cast<const T*>(c.x), static_cast<const T*>(c.y), c.n, blocks, block_warps, partials};
  const cudaError_t pending = cudaPeekAtLastError();
  launch_warps(exec, "ew::reduce blocks", block_warps, walk);
  const std::int64_t run_warps = std::min<std::int64_t>(static_cast<std::int64_t>(runs), grid.warps<WarpRuns>());
  const WarpRuns fold{partials, nodes, blocks, runs, run_warps, w};
  launch_warps(exec, "ew::reduce runs", run_warps, fold);
  // A launch that failed would leave the last call's nodes to be read.
  check_launches(pending, "a reduction's kernels");
  check_cuda(cudaStreamSynchronize(exec.cuda_stream()), "cudaStreamSynchronize");
  if (c.node) return {plan::pair_tree(host_nodes, runs), 0};
  return {plan::finish_partials(c.kind, sizeof(T) == 8, host_nodes, runs), 0};
}

// min/max. The winner under the plan's total order (plan::beats) is the same for every
// grouping, so the threads read as the bus likes it, in grid-stride order, a batch of loads
// written before its compares: f32 and f64 element by element (a coalesced row of the warp a
// load), 16-bit data as 16-byte vectors of 8, whose odd elements before the first 16-byte
// boundary and after the last vector the first threads take before and after their vectors.
// (2-byte loads held 16-bit data far below the cuda backend; vectors of f32 and f64 read a
// few per cent slower than their elements at 2^25..2^28 on an H200.) A thread thus meets its
// elements in increasing order and keeps only strictly better ones: equal values keep the
// first index, and a NaN, once held, is beaten by nothing. It starts from (worst, no index),
// which every element but the worst value itself beats: a thread that finds nothing better
// offers no candidate, and where no thread does, every element is the worst value and element
// 0 wins (run_extremum_on_warps). The warp's winner by xor shuffles under plan::beats; lane 0
// writes the warp's candidate.
constexpr std::uint64_t no_candidate = ~std::uint64_t(0);

template <bool IsMin>
KOKKOS_FORCEINLINE_FUNCTION double worst_value() {
  return IsMin ? Kokkos::Experimental::infinity<double>::value : -Kokkos::Experimental::infinity<double>::value;
}

// The winner of (value, index) pairs across the warp's lanes, in every lane.
template <bool IsMin>
KOKKOS_FORCEINLINE_FUNCTION void warp_winner(double& value, std::uint64_t& index) {
#if defined(__CUDA_ARCH__)
  for (int s = 1; s < warp_lanes; s <<= 1) {
    const double v = __shfl_xor_sync(0xffffffffu, value, s);
    const std::uint64_t i = __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(index), s);
    if (plan::beats(IsMin, v, i, value, index)) value = v, index = i;
  }
#else
  (void)value, (void)index;
#endif
}

template <bool IsMin, class T>
struct WarpExtrema {
  using C = widened_t<T>;
  using Load = std::conditional_t<sizeof(T) == 2, uint4, T>;
  static constexpr int V = static_cast<int>(sizeof(Load) / sizeof(T));  // elements a load
  static constexpr int ahead = V == 1 ? 16 : 8;                         // loads written before their compares
  // 16-bit data's eight vectors in flight and their widening take 40 registers; f32 and f64 32.
  static constexpr int resident_blocks = sizeof(T) == 2 ? 6 : 8;
  const T* x;
  std::size_t n, threads;
  std::size_t head, loads;  // the odd elements before the first load; the loads from there
  double* values;           // a candidate a warp
  std::uint64_t* indices;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const {
#if defined(__CUDA_ARCH__)
    const std::size_t me = static_cast<std::size_t>(t);
    C best = static_cast<C>(worst_value<IsMin>());
    std::uint64_t at = no_candidate;
    const auto visit = [&](C v, std::size_t i) {
      const bool better = (IsMin ? !(v >= best) : !(v <= best)) && best == best;
      best = better ? v : best;
      at = better ? i : at;
    };
    const auto visit_load = [&](const Load& w, std::size_t j) {
      T e[V];
      static_assert(sizeof(e) == sizeof(w), "V elements a load");
      memcpy(e, &w, sizeof(w));
#pragma unroll
      for (int k = 0; k < V; ++k) visit(widened(e[k]), head + j * V + k);
    };
    if (me < head) visit(widened(x[me]), me);
    const Load* const xl = reinterpret_cast<const Load*>(x + head);
    std::size_t j = me;
    for (; j + (ahead - 1) * threads < loads; j += ahead * threads) {
      Load w[ahead];
#pragma unroll
      for (int k = 0; k < ahead; ++k) w[k] = xl[j + k * threads];
#pragma unroll
      for (int k = 0; k < ahead; ++k) visit_load(w[k], j + k * threads);
    }
    for (; j < loads; j += threads) {
      const Load w = xl[j];  // one load: a vector passed on by reference became sixteen 1-byte loads
      visit_load(w, j);
    }
    const std::size_t tail = head + loads * V;
    if (me < n - tail) visit(widened(x[tail + me]), tail + me);
    double value = static_cast<double>(best);
    // 16-bit data: the candidate's value widened as every backend widens it (NaN payloads too).
    if constexpr (sizeof(T) == 2)
      if (at != no_candidate) value = static_cast<double>(x[at]);
    warp_winner<IsMin>(value, at);
    if (t % warp_lanes == 0) values[t / warp_lanes] = value, indices[t / warp_lanes] = at;
#else
    (void)t;
#endif
  }
};

// The winner of each aligned run of 32 candidates, a warp a run (launched a warp for every run).
template <bool IsMin>
struct WarpWinners {
  static constexpr int resident_blocks = 8;
  const double* values;
  const std::uint64_t* indices;
  double* run_values;
  std::uint64_t* run_indices;
  std::size_t candidates;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const {
    const std::size_t r = static_cast<std::size_t>(t / warp_lanes), i = static_cast<std::size_t>(t);
    double value = i < candidates ? values[i] : worst_value<IsMin>();
    std::uint64_t index = i < candidates ? indices[i] : no_candidate;
    warp_winner<IsMin>(value, index);
    if (t % warp_lanes == 0) run_values[r] = value, run_indices[r] = index;
  }
};

template <bool IsMin, class T>
ReduceResult run_extremum_on_warps(const Kokkos::Cuda& exec, const ReduceCall& c, ReduceScratch& scratch,
                                   const WarpGrid& grid) {
  using Read = WarpExtrema<IsMin, T>;
  using Load = typename Read::Load;
  const T* const x = static_cast<const T*>(c.x);
  const std::size_t past = reinterpret_cast<std::uintptr_t>(x) % sizeof(Load);  // bytes past a load's boundary
  const std::size_t skew = (sizeof(Load) - past) % sizeof(Load) / sizeof(T);
  const std::size_t head = std::min(c.n, skew), loads = (c.n - head) / Read::V;
  // At most a warp for every 32 loads, and at least one (whose first threads take the odd
  // elements at either end).
  const std::size_t warps = std::min<std::size_t>(std::max<std::size_t>(1, (loads + warp_lanes - 1) / warp_lanes),
                                                  static_cast<std::size_t>(grid.warps<Read>()));
  const std::size_t runs = (warps + warp_lanes - 1) / warp_lanes;
  double* const candidates = scratch.partials(2 * warps);  // values, then indices
  auto* const candidate_indices = reinterpret_cast<std::uint64_t*>(candidates + warps);
  double* nodes = nullptr;
  const double* const host_nodes = scratch.nodes(2 * runs, &nodes);
  const Read read{x, c.n, warps * warp_lanes, head, loads, candidates, candidate_indices};
  const cudaError_t pending = cudaPeekAtLastError();
  launch_warps(exec, "ew::reduce extrema", static_cast<std::int64_t>(warps), read);
  const WarpWinners<IsMin> fold{candidates, candidate_indices, nodes, reinterpret_cast<std::uint64_t*>(nodes + runs),
                                warps};
  launch_warps(exec, "ew::reduce extrema runs", static_cast<std::int64_t>(runs), fold);
  check_launches(pending, "a reduction's kernels");  // as run_sum_on_warps
  check_cuda(cudaStreamSynchronize(exec.cuda_stream()), "cudaStreamSynchronize");
  const std::uint64_t* const host_indices = reinterpret_cast<const std::uint64_t*>(host_nodes + runs);
  ReduceResult best{host_nodes[0], host_indices[0]};
  for (std::size_t r = 1; r < runs; ++r)
    if (plan::beats(IsMin, host_nodes[r], host_indices[r], best.value, best.index))
      best = {host_nodes[r], host_indices[r]};
  // No element beat the worst value: every element is that value, and the first wins.
  if (best.index == no_candidate) best = {worst_value<IsMin>(), 0};
  return best;
}

template <class T>
ReduceResult run_reduce_typed(const Kokkos::Cuda& exec, const ReduceCall& c, ReduceScratch& scratch, std::int64_t max_warps) {
#if defined(KOKKOS_IMPL_DEBUG_CUDA_SERIAL_EXECUTION)  // one thread a launch: no warps
  return run_reduce_typed<T>(exec, c);
#endif
  // Each kernel's grid as WarpGrid sizes it, and at most a warp a plan block or run.
  const WarpGrid warps{exec, max_warps};
  switch (c.kind) {
    case plan::Kind::sum: return run_sum_on_warps<plan::Kind::sum, T>(exec, c, scratch, warps);
    case plan::Kind::asum: return run_sum_on_warps<plan::Kind::asum, T>(exec, c, scratch, warps);
    case plan::Kind::dot: return run_sum_on_warps<plan::Kind::dot, T>(exec, c, scratch, warps);
    case plan::Kind::norm2: return run_sum_on_warps<plan::Kind::norm2, T>(exec, c, scratch, warps);
    case plan::Kind::min: return run_extremum_on_warps<true, T>(exec, c, scratch, warps);
    default: return run_extremum_on_warps<false, T>(exec, c, scratch, warps);
  }
}
#else
struct ReduceScratch {};  // host spaces: each call's views
#endif

// `scratch`: the context's, which the reductions use on Cuda; `max_warps` for tests (run_reduce_typed).
template <class Exec>
ReduceResult run_reduce(const Exec& exec, const ReduceCall& c, [[maybe_unused]] ReduceScratch& scratch,
                        [[maybe_unused]] std::int64_t max_warps = 0) {
  const auto typed = [&](auto tag) {
    using T = decltype(tag);
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) return run_reduce_typed<T>(exec, c, scratch, max_warps);
#endif
    return run_reduce_typed<T>(exec, c);
  };
  switch (c.dtype) {
    case DType::f32: return typed(float{});
    case DType::f16: return typed(half{});
    case DType::bf16: return typed(bfloat16{});
    default: return typed(double{});
  }
}

}  // namespace ew::detail::kokkos
