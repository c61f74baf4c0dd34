// Reductions on the GPU in one launch, on the plan's tree (ew_internal/reduce_plan.hpp).
//
// Sums (sum, asum, dot, norm2). A thread owns V adjacent plan lanes of a plan block
// (V = lanes_per_thread: 1, 2 or 4) and reads them row by row as one V-element vector
// (coalesced: the block's 32/V threads read a row of 32 consecutive elements), `loads`
// rows issued before their adds; each plan lane still adds its elements j, j + 32, ...
// in order. The thread combines its V lanes by the lane tree's lowest levels in
// registers, the 32/V threads of the block finish the lane tree through shuffles. A warp
// thus computes V plan blocks at a time, combines them (a node of the canonical tree, V
// being a power of two) and folds those nodes into its run: an aligned power-of-two run of
// plan blocks, itself a node of the tree, written as one partial. Warps take runs in
// grid-stride order and never wait for each other. The last CUDA block to finish (an
// acq_rel atomic counter) combines the runs' partials by the tree, finishes
// (sqrt, Blue's scaling, rounding to the data's type) and writes the result.
//
// The staged kernel (staged_kernel, sm_90+) computes the same tree from plan blocks that the
// copy engine brings into shared memory, units of them taken in grid-stride order; it is the
// default where it measured faster (default_reduce_tuning).
//
// min/max: the winner is exact, so the grouping only has to be complete: each CUDA block
// reads a range of the array as 16-byte vectors (extremum_kernel).
//
// 16-bit data (f16, bf16) take the f32 path of the plan: each element widened exactly
// (the hardware's conversion: exact for every number, and a NaN term makes the result the
// default NaN whatever its payload), V = 8 lanes per thread read as one 16-byte vector.
//
// The grouping is a tuning (ReduceTuning, reduce.hpp), not part of the result: any
// aligned power-of-two run of plan blocks is a node of the one tree. Every add and
// multiply is __dadd_rn/__dmul_rn (plan::add/mul): no contraction, the same bits as
// every CPU backend. The file is also compiled with --fmad=false.
#include <cuda/atomic>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_error.hpp"
#include "kernels.cuh"  // launch_kernel, wait_for_previous_grid: programmatic dependent launch
#include "reduce.hpp"
#include "thread_context.hpp"

namespace ew::detail::cuda {

namespace {

using plan::Kind;

// ---- The defaults, in one place. Measured alternatives: ew-cuda-reduce-bench --sweep.
// From the compiled code (registers, loads in flight: reduce_check.sh logs both) and the
// H100 sweeps of 2026-11-23 (bench/cuda/results/h100-2026-11-23-reduce3-sweep*.log): f32
// 4 lanes x 8 rows (128 bytes in flight per thread) was the fastest f32 shape for sum at
// 2^24 and 2^28 (0.92-0.95x cub against 4x4's 0.88-0.93) and as fast as 4x4 for dot; for
// f64, 2 lanes x 8 rows beat 2x4 by 1-3 % in sum and dot. 2x16 loses 30 % in dot (255
// registers, spilled) and norm2 (three accumulators) spills too; for sum and asum (224
// registers, one CUDA block per SM) it reads 3-4 % faster at 2^24, where the call is
// shortest, and as fast above (the 2026-11-26 sweeps on an H100 and an H200).
constexpr ReduceShape default_shape_f32{4, 8};
constexpr ReduceShape default_shape_f64{2, 8};
constexpr ReduceShape default_shape_f64_sum{2, 16};
// 16-bit: 8 halves (16 bytes) per row and thread, 4 rows in flight: the bytes per thread of
// f32's 4x4 (H100, 2026-11-23: sum 0.95-0.97x cub's float-accumulated TransformReduce, dot
// 1.06-1.35x; the other 16-bit shapes not swept).
constexpr ReduceShape default_shape_16{8, 4};
constexpr int default_runs_per_sm = 0;   // 0: as many runs as warps fit on an SM (one wave)
// ... but runs of at most this many plan blocks, a warp then taking several in turn. The
// 2026-11-26 sweeps at 2^28 (H100, H200): runs of 64 plan blocks, two a warp, read 0.6-1.4 %
// faster than one run of 128 for every kernel of 8 warps an SM (dot f32 and f64, the f64
// sum), each round of runs spanning half the array; halving runs of at most 32 plan blocks
// (2^24..2^26) lost up to 6 %.
constexpr std::size_t default_longest_run = 64;
constexpr int default_ctas_per_sm = -1;  // no cap: one warp per run
// The staged kernel where it measured faster on both an H100 and an H200 (2026-11-27,
// docs/PERFORMANCE.md, "Twelfth round"; plan blocks per SM, 2^22 being 15.5 of them on 132
// SMs): the scaled 2-norm of f64 data, whose three accumulators a lane make the register
// kernel spill, from 2^22 (1.01-1.46x it); the f64 dot from 2^23 to 2^27 (1.01-1.05x; one
// H200 0.985-0.988x at 2^26..2^27); the f32 and f64 sums at 2^24..2^25 (1.00-1.03x; from 2^26
// the f32 sum read 2-3 % slower on the H200s, the f64 sum 0.98-1.02x by machine). Below 2^22
// it took 0.3-2.6 us more a call. The f32 dot and the fast-memory sums: below. Each bound lies
// between two measured sizes' counts on 132 SMs, away from both, so that a GPU with somewhat
// more or fewer SMs keeps the same sizes.
// The f32 dot on GPUs with less than 30 GB/s of memory per SM (the H100, 25.4) from 2^24: there
// the staged kernel read it 0.4-2.3 % faster at 2^24..2^28 (two machines, warm and cold). On
// the H200 (36.5) it read 0.1-2.0 % slower then; with its odd rows widened from their bits
// (2026-12-04, four H200s, warm and cold) its cost against the non-reproducible kernel is 1-5
// points lower than the register kernel's at 2^24, 0-2 at 2^25 and 7-8 at 2^23, 0.5-1 higher at
// 2^26: 2^23..2^25 there. The
// threshold lies between the two GPUs measured: two points, not a model (an H100 NVL, 29.5 GB/s
// an SM, and a GH200, about 30, were not measured).
struct StagedRange {
  std::size_t from, below;
};
// Where the memory is fast an SM, the sums from 2^24 on: the f64 sum to 2^27, the f32 sum
// (with units of 32 plan blocks, below) to the end. On H200s (2026-12-04, three series each)
// the staged kernel read the f64 sum's cost 0.6-1.5 points lower than the register kernel at
// 2^26 (four machines) and 1.5 at 2^27 (two), level at 2^28; the f32 sum's 0.6-2 points lower
// at 2^26, 1-1.5 at 2^27 and 0.3-1 at 2^28 (two; docs/PERFORMANCE.md, "Nineteenth round").
constexpr StagedRange staged_norm2_f64{12, ~std::size_t(0)}, staged_dot_f64{24, 700}, staged_sum{48, 192},
    staged_f32_sum_fast_memory{48, ~std::size_t(0)}, staged_f64_sum_fast_memory{48, 768},
    staged_dot_f32_slow_memory{48, ~std::size_t(0)}, staged_dot_f32_fast_memory{24, 192};
// The two GPUs measured lie on either side of this much memory bandwidth an SM (H100 25.4 GB/s,
// H200 36.5): below it the f32 dot takes the staged kernel, above it the f32 sum's ring is one
// piece (below).
constexpr double fast_memory_bytes_per_second_per_sm = 30e9;
constexpr int default_stage_slots = 2;
// The f32 sum on the staged kernel (by default from 2^24 on 132 SMs; wherever it is forced
// too) where the memory is fast an SM: a ring of one 8 KiB piece a warp (the column copied into
// registers, the slot refilled at once), one CUDA block an SM (80 KiB of shared memory): on two
// H200s it read 1.3-2.1 points faster at 2^24 and 0.7-0.9 at 2^25 than two slots, with half the
// bytes in flight, and forced at 2^23 and 2^27..2^28 faster too, level at 2^26 (two such blocks
// an SM, the same bytes in flight as two slots, read 3-4 points slower at 2^24; the f64 sum read
// slower with one piece). docs/PERFORMANCE.md, "Sixteenth round"; not measured on an H100,
// which keeps two slots.
constexpr int fast_memory_f32_sum_stage_slots = 1;
constexpr int fast_memory_f32_sum_stage_ctas_per_sm = 1;
// ... and from 96 plan blocks per SM (2^25 on 132 SMs) units of 32 plan blocks (R = 4: four
// consecutive ones a warp, a quarter of the units' combines and nodes): on two H200s
// (2026-12-04, three series each) 1.5-2 points less cost than units of 8 at 2^25, level at 2^24;
// the f64 sum and the f32 dot read slower or level with them.
constexpr std::size_t fast_memory_f32_sum_long_units_from = 96;
constexpr int fast_memory_f32_sum_stage_run = 4;
// ... and units of plan blocks for at most this many unit nodes (the last CUDA block's work;
// sum_kernel's runs: 2048 at 2^28): R = 1 to 2^26, 2 at 2^27, 4 at 2^28 (and the fast-memory
// f32 sum's 4 from 2^25, above).
constexpr std::size_t staged_units = 4096;
// Below this many plan blocks per SM, one lane per thread (more warps: small sizes are
// latency-bound, and a plan block's 64 rows are the most one lane can take apart).
constexpr std::size_t vector_lanes_from_blocks_per_sm = 16;

// Built (lanes per thread, loads) pairs; f64 takes those with lanes <= 2, f32 those with
// lanes <= 4, 16-bit data those with 1 or 8 lanes (built(): each pair costs compile time).
constexpr ReduceShape shapes[] = {{1, 8}, {1, 16}, {2, 4}, {2, 8}, {2, 16}, {4, 2}, {4, 4}, {4, 8}, {8, 2}, {8, 4}};
static_assert(sizeof(shapes) / sizeof(shapes[0]) == reduce_shape_count, "Reducer's table of resident blocks has a row a shape");

constexpr int warps_per_cta = 8;
constexpr int threads_per_cta = warps_per_cta * 32;
static_assert(threads_per_cta == kThreads, "launched by kernels.cuh's launch_kernel");
constexpr std::size_t max_run_blocks = std::size_t(1) << 20;
constexpr int rows = static_cast<int>(plan::block_elements / plan::lanes);  // 64 per plan block
constexpr int final_in_registers = 16;  // last block: nodes a thread loads at once

// Workspace layout: the counter, the result, then the partials (and min/max indices).
// The result also goes to the host's copy of the header when the call returns it to the
// host: pinned memory mapped into the device's address space, which the last CUDA block
// writes directly (so the call needs no copy after the kernel: BabelStream's CUDA Dot does
// the same with its partial sums).
struct Header {
  unsigned int finished;  // CUDA blocks done; the last one resets it to 0
  unsigned int pad;
  double value;
  unsigned long long index;
};

template <Kind kind, class T>
struct Width {
  static constexpr int value = kind == Kind::norm2 && sizeof(T) == 8 ? 3 : 1;
};

// An element as double, exactly. 16-bit data through the hardware's conversion (one
// instruction; ew::half's integer code would cost more than the load).
template <class T>
__device__ __forceinline__ double as_double(T v) {
  if constexpr (std::is_same_v<T, ew::half>) return static_cast<double>(__half2float(__ushort_as_half(v.bits)));
  else if constexpr (std::is_same_v<T, ew::bfloat16>) return static_cast<double>(__uint_as_float(static_cast<unsigned>(v.bits) << 16));
  else return static_cast<double>(v);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900  // the staged kernel's alone
// A float as double from its bits, on the integer and FP64 units: the sign and the bits
// below it shifted into a double's place (the exponent lands 896 low, a subnormal float as a
// subnormal double), then scaled by 2^896, exactly. Exact for every finite float; an
// infinity or NaN comes out finite, and `big` (the largest magnitude's bits seen) tells.
__device__ __forceinline__ double widened_by_bits(float f, unsigned& big) {
  const unsigned b = __float_as_uint(f), magnitude = b & 0x7fffffffu;
  big = magnitude > big ? magnitude : big;
  const double placed = __hiloint2double(static_cast<int>((magnitude >> 3) | (b & 0x80000000u)), static_cast<int>(b << 29));
  return __dmul_rn(placed, 0x1p896);
}
inline constexpr unsigned float_not_finite = 0x7f800000u;  // magnitude bits of +inf and up

template <Kind kind>
__device__ __forceinline__ void accumulate_widened(double (&acc)[3], double v, double yv) {
  if constexpr (kind == Kind::sum) acc[0] = plan::add(acc[0], plan::term_sum(v));
  else if constexpr (kind == Kind::asum) acc[0] = plan::add(acc[0], plan::term_asum(v));
  else if constexpr (kind == Kind::dot) acc[0] = plan::add(acc[0], plan::term_dot(v, yv));
  else acc[0] = plan::add(acc[0], plan::term_square(v));
}
#endif

template <Kind kind, class T>
__device__ __forceinline__ void accumulate(double (&acc)[3], T xv, T yv) {
  const double v = as_double(xv);
  if constexpr (kind == Kind::sum) acc[0] = plan::add(acc[0], plan::term_sum(v));
  else if constexpr (kind == Kind::asum) acc[0] = plan::add(acc[0], plan::term_asum(v));
  else if constexpr (kind == Kind::dot) acc[0] = plan::add(acc[0], plan::term_dot(v, as_double(yv)));
  else if constexpr (sizeof(T) != 8) acc[0] = plan::add(acc[0], plan::term_square(v));
  else {
    const int c = plan::norm2_class(v);
    const double t = plan::norm2_term(v, c);
    // Adding +0 to the other two leaves them as they are (they are >= +0 or NaN).
    acc[0] = plan::add(acc[0], c == 0 ? t : 0.0);
    acc[1] = plan::add(acc[1], c == 1 ? t : 0.0);
    acc[2] = plan::add(acc[2], c == 2 ? t : 0.0);
  }
}

// V consecutive elements at p (aligned to V elements) in one load.
template <class T, int V>
__device__ __forceinline__ void load_vector(const T* p, T (&out)[V]) {
  if constexpr (sizeof(T) == 2) {
    // 16-bit: the V elements as one load of 2V bytes.
    static_assert(V == 1 || V == 8, "16-bit shapes: 1 or 8 lanes per thread");
    if constexpr (V == 1) {
      out[0].bits = __ldg(reinterpret_cast<const unsigned short*>(p));
    } else {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
      const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        out[2 * k].bits = static_cast<std::uint16_t>(words[k] & 0xffffu);
        out[2 * k + 1].bits = static_cast<std::uint16_t>(words[k] >> 16);
      }
    }
  } else if constexpr (V == 1) {
    out[0] = __ldg(p);
  } else if constexpr (sizeof(T) == 4 && V == 2) {
    const float2 v = __ldg(reinterpret_cast<const float2*>(p));
    out[0] = v.x, out[1] = v.y;
  } else if constexpr (sizeof(T) == 4 && V == 4) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(p));
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  } else {
    static_assert(sizeof(T) == 8 && V == 2, "vectors of at most 16 bytes");
    const double2 v = __ldg(reinterpret_cast<const double2*>(p));
    out[0] = v.x, out[1] = v.y;
  }
}

// The canonical tree of v[0..count) (1 <= count <= M, M a power of two), in registers:
// node [i, i + 2 span) is v[i] + v[i + span] when its right half holds anything.
template <int M>
__device__ __forceinline__ double register_tree(double (&v)[M], int count) {
#pragma unroll
  for (int span = 1; span < M; span *= 2)
#pragma unroll
    for (int i = 0; i + span < M; i += 2 * span)
      if (i + span < count) v[i] = plan::add(v[i], v[i + span]);
  return v[0];
}

// The canonical tree over the CUDA block's nodes (thread t holds node t of m, m <= the
// block's threads), the root returned in thread 0: shuffles within each warp, one barrier,
// then warp 0 combines the warps' nodes. Pairing node t with t + o where t is a multiple of
// 2o is the tree's node (k, t / 2^k); a warp's node covers 32 nodes, an aligned range.
// (A tree in shared memory took two barriers per level: 16 for 256 nodes, on the call's
// critical path, since only the last block runs it.)
template <int w>
__device__ void block_tree(double (&v)[3], int m, double (*sh)[warps_per_cta]) {
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
#pragma unroll
  for (int o = 1; o < 32; o *= 2)
#pragma unroll
    for (int c = 0; c < w; ++c) {
      const double other = __shfl_down_sync(0xffffffffu, v[c], o);
      if ((lane & (2 * o - 1)) == 0 && t + o < m) v[c] = plan::add(v[c], other);
    }
  if (lane == 0)
#pragma unroll
    for (int c = 0; c < w; ++c) sh[c][warp] = v[c];
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int c = 0; c < w; ++c) v[c] = lane < warps_per_cta ? sh[c][lane] : 0.0;
#pragma unroll
  for (int o = 1; o < warps_per_cta; o *= 2)
#pragma unroll
    for (int c = 0; c < w; ++c) {
      const double other = __shfl_down_sync(0xffffffffu, v[c], o);
      if ((lane & (2 * o - 1)) == 0 && (lane + o) * 32 < m) v[c] = plan::add(v[c], other);
    }
}

// The canonical tree over the nodes of G consecutive threads of a warp (G a power of two,
// q the thread's place among them), the root in the first of them.
template <int G>
__device__ __forceinline__ double threads_tree(double v, int q) {
#pragma unroll
  for (int offset = 1; offset < G; offset *= 2) {
    const double other = __shfl_down_sync(0xffffffffu, v, offset);
    if ((q & (2 * offset - 1)) == 0) v = plan::add(v, other);
  }
  return v;
}

// The levels of the canonical tree over a warp's 32 lane nodes from offset O on (the lower
// levels already taken): lane l adds lane l + o's node where it is a left node, the root
// of the nodes congruent to l mod O in lane l < O.
template <int O>
__device__ __forceinline__ double threads_tree_from(double v, int lane) {
#pragma unroll
  for (int offset = O; offset < 32; offset *= 2) {
    const double other = __shfl_down_sync(0xffffffffu, v, offset);
    if ((lane & offset) == 0) v = plan::add(v, other);
  }
  return v;
}

__host__ __device__ constexpr int log2_of(std::size_t v) { return v > 1 ? 1 + log2_of(v / 2) : 0; }

// True in the last CUDA block of the grid to get here. Thread 0's count is a release of
// every partial this CUDA block wrote (the barrier orders its warps' stores before it) and
// an acquire of every other block's (the barrier after it orders this block's loads after
// it): one acq_rel atomic instead of __threadfence, a sequentially consistent fence
// (MEMBAR.SC.GPU) after every partial and again before the combine.
__device__ __forceinline__ bool last_to_arrive(Header* header, bool& last) {
  __syncthreads();
  if (threadIdx.x == 0) {
    ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> finished(header->finished);
    last = finished.fetch_add(1u, ::cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  return last;
}

// The last CUDA block's work: the canonical tree over `count` nodes of equal size (the
// partials of aligned runs or groups of plan blocks; node i's accumulator c at
// nodes[i w + c]), the finish (sqrt, Blue's scaling, rounding to the data's type) and the
// stores of the result. Leaves the counter at 0 for the next launch.
template <Kind kind, class T>
__device__ void finish_tree(const double* nodes, std::size_t count_all, Header* header, compute_t<T>* out,
                            double* node_out, Header* host_header, double (*warp_nodes)[warps_per_cta]) {
  constexpr int w = Width<kind, T>::value;
  // Each thread first takes an aligned power-of-two range of nodes (a node itself).
  std::size_t per = 1;
  while (per * threads_per_cta < count_all) per *= 2;
  const std::size_t lo = static_cast<std::size_t>(threadIdx.x) * per;
  const std::size_t count = lo < count_all ? (count_all - lo < per ? count_all - lo : per) : 0;
  const int ranges = static_cast<int>((count_all + per - 1) / per);
  // Loaded 16 at a time (independent loads in flight), each 16 an aligned node.
  double v[3] = {0.0, 0.0, 0.0};
  if (count > 0)
#pragma unroll
    for (int c = 0; c < w; ++c)
      v[c] = plan::pair_tree_of((count + final_in_registers - 1) / final_in_registers, [&](std::size_t k) {
        const std::size_t at = lo + k * final_in_registers;
        const int m = static_cast<int>(lo + count - at < final_in_registers ? lo + count - at : final_in_registers);
        double r[final_in_registers];
#pragma unroll
        for (int i = 0; i < final_in_registers; ++i) r[i] = i < m ? __ldcg(nodes + (at + i) * w + c) : 0.0;
        return register_tree<final_in_registers>(r, m);
      });
  block_tree<w>(v, ranges, warp_nodes);
  if (threadIdx.x == 0) {
    const double acc[3] = {v[0], w > 1 ? v[1] : 0.0, w > 2 ? v[2] : 0.0};
    // Node mode (ReduceCall::node): the root before the finish, as a double.
    header->value = node_out ? acc[0] : plan::finish(kind, sizeof(T) == 8, acc);
    header->index = 0;
    if (node_out) *node_out = acc[0];
    else if (out) *out = static_cast<compute_t<T>>(header->value);
    if (host_header) host_header->value = header->value, host_header->index = 0;
    header->finished = 0;
  }
}

// U rows of V elements of this thread's lanes: the rows a thread has in registers or in flight.
template <class T, int V, int U>
struct Rows {
  T x[U][V], y[U][V];
};

// Rows [r0, r0 + U) of this thread's lanes in the plan block whose lanes start at xb (and yb).
template <bool two, class T, int V, int U>
__device__ __forceinline__ void load_rows(const T* xb, const T* yb, int r0, Rows<T, V, U>& r) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    load_vector<T, V>(xb + (r0 + u) * plan::lanes, r.x[u]);
    if constexpr (two) load_vector<T, V>(yb + (r0 + u) * plan::lanes, r.y[u]);
  }
}

// This thread's V plan lanes of plan block b (q: the thread's place among the block's
// 32/V threads), each lane's sum in acc[k]. `pre` holds block b's first U rows when
// `preloaded`; before adding its last rows the thread loads the first rows of plan block
// `next` (when it is a full block it will take, else next = no_block) into `pre`, so that
// the loads stay in flight through the lane tree and the run's merges between the two
// blocks instead of the memory pipeline draining at every block.
constexpr std::size_t no_block = ~std::size_t(0);

template <Kind kind, class T, int V, int U>
__device__ __forceinline__ void lanes_of_block(const T* __restrict__ x, const T* __restrict__ y, std::size_t n,
                                               std::size_t b, std::size_t next, int q, bool vector_ok,
                                               double (&acc)[V][3], Rows<T, V, U>& pre, bool& preloaded) {
  constexpr bool two = kind == Kind::dot;
#pragma unroll
  for (int k = 0; k < V; ++k) acc[k][0] = acc[k][1] = acc[k][2] = 0.0;
  const std::size_t begin = b * plan::block_elements;
  const std::size_t lane_offset = static_cast<std::size_t>(q) * V;
  if (n - begin >= plan::block_elements && vector_ok) {
    const T* xb = x + begin + lane_offset;
    const T* yb = two ? y + begin + lane_offset : nullptr;
    // Software-pipelined: the next U rows are loaded before this U rows' adds, so they are
    // in flight while the adds run, whatever order ptxas picks within an iteration (the
    // values cross the loop's back edge). Without it ptxas issues a few of a batch's loads
    // and interleaves the rest with their adds (bench/cuda/reduce_sass.py counts them).
    if (!preloaded) load_rows<two, T, V, U>(xb, yb, 0, pre);
    // Decided before the rows' loop: decided after it, n and next stayed live through the loop
    // and ptxas gave the f64 2x8 sum 137 registers (one CUDA block per SM) instead of 124.
    const bool next_full = next != no_block && n - next * plan::block_elements >= plan::block_elements;
#pragma unroll 1
    for (int r0 = U; r0 < rows; r0 += U) {
      Rows<T, V, U> nx;
      load_rows<two, T, V, U>(xb, yb, r0, nx);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int k = 0; k < V; ++k) accumulate<kind, T>(acc[k], pre.x[u][k], two ? pre.y[u][k] : T(0));
      pre = nx;
    }
    Rows<T, V, U> nx;
    preloaded = next_full && vector_ok;
    if (preloaded) {
      const std::size_t nb = next * plan::block_elements + lane_offset;
      load_rows<two, T, V, U>(x + nb, two ? y + nb : nullptr, 0, nx);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) accumulate<kind, T>(acc[k], pre.x[u][k], two ? pre.y[u][k] : T(0));
    if (preloaded) pre = nx;
  } else {
    // A short last block, or operands not aligned to the vector: element by element, in
    // each lane's order.
    preloaded = false;
    const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
    for (int r = 0; r < rows; ++r)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const std::size_t i = static_cast<std::size_t>(r) * plan::lanes + lane_offset + k;
        if (i < count) accumulate<kind, T>(acc[k], x[begin + i], two ? y[begin + i] : T(0));
      }
  }
}

template <Kind kind, class T, int V, int U>
__global__ void __launch_bounds__(threads_per_cta)
    sum_kernel(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, std::size_t blocks,
               std::size_t run_blocks, std::size_t runs, bool vector_ok, Header* header, double* partials,
               compute_t<T>* out, double* node_out, Header* host_header) {
  constexpr int w = Width<kind, T>::value;
  constexpr int G = 32 / V;  // threads per plan block
  __shared__ double warp_nodes[3][warps_per_cta];
  __shared__ bool last;
  // Nothing global before the kernel ahead of this one on the stream has finished: the
  // workspace and the operands may be its. Launched right after it, this grid's blocks take
  // SMs as that kernel's leave, instead of after a launch gap.
  wait_for_previous_grid();
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int group = lane / G, q = lane % G;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * warps_per_cta;

  // 1. Runs, a warp each, in grid-stride order. A warp's loads run on from one run into
  // its following one.
  Rows<T, V, U> pre;
  bool preloaded = false;
  for (std::size_t run = static_cast<std::size_t>(blockIdx.x) * warps_per_cta + warp; run < runs; run += warps) {
    const std::size_t following = run + warps;
    const std::size_t run_first = run * run_blocks;
    const std::size_t run_end = blocks - run_first < run_blocks ? blocks : run_first + run_blocks;
    // This thread's first block of the following run, if it has one.
    const std::size_t following_first = following * run_blocks + static_cast<std::size_t>(group);
    const std::size_t following_block = following < runs && following_first < blocks &&
                                                following_first < (following + 1) * run_blocks
                                            ? following_first
                                            : no_block;
    // The binary counter of the run's tree, nodes of V blocks: level d in lane d (a run has
    // at most 2^20 blocks, 21 levels), so that it stays in registers; an array indexed by
    // depth went to local memory (a 1056-byte stack frame in every sum kernel).
    double level[3] = {0.0, 0.0, 0.0};
    int depth = 0;
    std::size_t step = 0;
    for (std::size_t first = run_first; first < run_end; first += V, ++step) {
      const std::size_t b = first + static_cast<std::size_t>(group);
      double acc[V][3];
      if (b < run_end) {
        const std::size_t next = b + V < run_end ? b + V : first + V < run_end ? no_block : following_block;
        lanes_of_block<kind, T, V, U>(x, y, n, b, next, q, vector_ok, acc, pre, preloaded);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k][0] = acc[k][1] = acc[k][2] = 0.0;
      }
      double node[3];
#pragma unroll
      for (int c = 0; c < w; ++c) {
        // The lane tree: the thread's own V lanes first (its lowest levels), then across
        // the block's threads.
        double mine[V];
#pragma unroll
        for (int k = 0; k < V; ++k) mine[k] = acc[k][c];
        node[c] = threads_tree<G>(register_tree<V>(mine, V), q);
        // The warp's V blocks: the canonical tree over those present.
#pragma unroll
        for (int o = 1; o < V; o *= 2) {
          const double other = __shfl_down_sync(0xffffffffu, node[c], o * G);
          if ((group & (2 * o - 1)) == 0 && first + group + o < run_end) node[c] = plan::add(node[c], other);
        }
      }
      // Merges: one per trailing 1 bit of the step (the complete nodes it closes). The node
      // is lane 0's; the whole warp runs the merges (depth is the same in every lane).
      for (std::size_t k = step; k & 1; k >>= 1) {
        --depth;
#pragma unroll
        for (int c = 0; c < w; ++c) node[c] = plan::add(__shfl_sync(0xffffffffu, level[c], depth), node[c]);
      }
#pragma unroll
      for (int c = 0; c < w; ++c) {
        const double top = __shfl_sync(0xffffffffu, node[c], 0);
        if (lane == depth) level[c] = top;
      }
      ++depth;
    }
    double r[3];
#pragma unroll
    for (int c = 0; c < w; ++c) r[c] = __shfl_sync(0xffffffffu, level[c], depth - 1);
    for (int d = depth - 2; d >= 0; --d)
#pragma unroll
      for (int c = 0; c < w; ++c) r[c] = plan::add(__shfl_sync(0xffffffffu, level[c], d), r[c]);
    if (lane == 0)
#pragma unroll
      for (int c = 0; c < w; ++c) partials[run * w + c] = r[c];
  }
  // 2. The last CUDA block to finish combines the runs' partials.
  if (last_to_arrive(header, last))
    finish_tree<kind, T>(partials, runs, header, out, node_out, host_header, warp_nodes);
}

// ---- The staged kernel (sm_90+, f32 and f64, operands 16-byte aligned): the same plan,
// read the way the GPU reads fastest. The plan blocks are cut into units of 8 R (a node of
// the canonical tree, R = 1, 2, 4 or 8 plan blocks a warp); CUDA blocks take units in
// grid-stride order, so that the whole GPU reads one window of the array at a time, and
// warp w of a CUDA block takes the unit's plan blocks R w .. R w + R - 1. Each warp's lane 0
// has the copy engine bring its plan blocks into shared memory in contiguous 8 KiB pieces
// (cp.async.bulk) through a ring of `slots` pieces. Lane j copies its column of a piece
// into registers, the slot goes back to the copy engine, and then lane j adds the column
// row by row, in the plan's order: a slot is held only while it is read. (Held through the
// adds as well, each slot spent that time out of flight, and the kernel read 10 % slower
// than a bench-only kernel of the same order at 2^24 on an H200, 5 % with the registers;
// docs/PERFORMANCE.md, "twelfth round".)
//
// The tree: the lane trees of a warp's plan blocks 8 at a time (lane_trees), a warp's R
// plan blocks by shuffles into the warp's node of the unit, kept in shared memory; when
// every warp is done, the CUDA block combines each of its units' 8 warp nodes and writes
// the unit's node, and the last CUDA block combines the units' nodes as sum_kernel
// combines its runs'. No fence while the array is read: a fence at gpu scope waits for
// the warp's copies in flight (a first form, with an acq_rel count a plan block, read
// 7-42 % slower than the register kernel on an H200; docs/PERFORMANCE.md, "eleventh round").
// It is the default where it measured faster than the register kernel
// (default_reduce_tuning).
constexpr unsigned piece_bytes = 8 << 10;
constexpr int max_stage_slots = 3;  // 8 warps x 3 x 8 KiB = 192 KiB, + the unit space: 208 KiB of an SM's 227
constexpr int max_stage_run = 8;    // plan blocks a warp in a unit
constexpr std::size_t unit_space_bytes = 16 << 10;  // the warps' nodes of a CUDA block's units
constexpr std::size_t unit_space_doubles = unit_space_bytes / sizeof(double) / warps_per_cta;  // a warp

// The lane trees of B plan blocks at once (B a power of two, at most 32): v[p] is this
// lane's partial of plan block p; returns plan block p's root in lane p (p < B). The tree
// is the lane tree of each plan block (threads_tree<32>), but its lowest log2 B levels
// share their shuffles: at offset o = 1, 2, .., B/2 the lanes l and l ^ o hold the same
// plan blocks' nodes, and the lower lane keeps the first half of them, the upper the
// second, each adding its partner's node of the half it keeps (the lower lane's node on
// the left, as in the plan). Then each lane holds one node, of plan block
// bit-reverse(l mod B), and the levels from offset B on are plain shuffles. B plan blocks
// cost B - 1 + log2(32 / B) adds and one shuffle more (9 and 10 for B = 8), where a tree
// after every plan block cost 5 B adds and 6 B shuffles.
template <int B>
__device__ __forceinline__ double lane_trees(double (&v)[B], int lane) {
#pragma unroll
  for (int o = 1, h = B / 2; h >= 1; o *= 2, h /= 2) {
    const bool upper = (lane & o) != 0;
#pragma unroll
    for (int j = 0; j < h; ++j) {
      const double keep = upper ? v[j + h] : v[j];
      const double got = __shfl_xor_sync(0xffffffffu, upper ? v[j] : v[j + h], o);
      v[j] = upper ? plan::add(got, keep) : plan::add(keep, got);
    }
  }
  double root = threads_tree_from<B>(v[0], lane);
  if constexpr (B > 1) root = __shfl_sync(0xffffffffu, root, static_cast<int>(__brev(static_cast<unsigned>(lane)) >> (32 - log2_of(B))));
  return root;
}

template <Kind kind, class T>
__global__ void __launch_bounds__(threads_per_cta)
    staged_kernel(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, std::size_t blocks, int slots,
                  int run_log2, Header* header, double* nodes, compute_t<T>* out, double* node_out,
                  Header* host_header) {
  // Code for sm_90 and later alone (the copy engine); the host never launches it on an older
  // architecture's code (LaunchShape::major).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int w = Width<kind, T>::value;
  constexpr bool two = kind == Kind::dot;
  constexpr int arrays = two ? 2 : 1;
  constexpr int piece_rows = static_cast<int>(piece_bytes / (arrays * plan::lanes * sizeof(T)));
  constexpr int pieces = rows / piece_rows;  // per plan block: f32 sum 1, f32 dot and f64 sum 2, f64 dot 4
  constexpr unsigned array_bytes = piece_rows * plan::lanes * sizeof(T);
  static_assert(rows % piece_rows == 0, "whole pieces a plan block");
  extern __shared__ __align__(128) unsigned char ring_space[];
  __shared__ __align__(8) unsigned long long barriers[warps_per_cta][max_stage_slots];
  __shared__ double warp_nodes[3][warps_per_cta];
  __shared__ bool last;
  const std::size_t run = std::size_t(1) << run_log2, unit_blocks = std::size_t(warps_per_cta) << run_log2;
  const std::size_t units = (blocks + unit_blocks - 1) >> (log2_of(warps_per_cta) + run_log2), ctas = gridDim.x;
  wait_for_previous_grid();  // as sum_kernel
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const std::size_t full = n / plan::block_elements;
  // This warp's plan blocks, in the order it reads them: its j-th is unit blockIdx.x + (j / R) ctas's
  // plan block R warp + j mod R, increasing in j, so that its full plan blocks come first.
  const std::size_t first = blockIdx.x * unit_blocks + warp * run, stride = ctas * unit_blocks;
  const auto block_of = [&](std::size_t j) { return first + (j >> run_log2) * stride + (j & (run - 1)); };
  unsigned char* ring = ring_space + static_cast<std::size_t>(warp) * slots * piece_bytes;
  // The warps' nodes of this CUDA block's i-th unit: accumulator c of warp v at [(i w + c) 8 + v].
  double* unit_space = reinterpret_cast<double*>(ring_space + std::size_t(warps_per_cta) * slots * piece_bytes);
  const auto barrier = [&](int slot) { return bulk::shared_address(&barriers[warp][slot]); };
  // Piece k (of the warp's full plan blocks, `pieces` a plan block) into the ring's slot, where
  // there is such a piece: the full plan blocks are a prefix of the warp's order.
  const auto issue = [&](std::size_t k, int slot) {
    const std::size_t b = block_of(k / pieces);
    if (b >= full) return;
    const std::size_t element = b * plan::block_elements + k % pieces * piece_rows * plan::lanes;
    const unsigned dst = bulk::shared_address(ring + slot * piece_bytes);
    bulk::fence_to_copy_engine();  // the slot's reads (or the barriers' init) before the copy engine's writes
    bulk::expect_bytes(barrier(slot), arrays * array_bytes);
    bulk::load(dst, x + element, array_bytes, barrier(slot));
    if constexpr (two) bulk::load(dst + array_bytes, y + element, array_bytes, barrier(slot));
  };
  if (lane == 0) {
    for (int slot = 0; slot < slots; ++slot) bulk::init_barrier(barrier(slot));
    for (int slot = 0; slot < slots; ++slot) issue(slot, slot);
  }
  __syncwarp();

  // Batches of 8 of the warp's plan blocks (8 / R units): each walked into its lanes' partials,
  // then the 8 lane trees at once, then each unit's warp node.
  constexpr int batch = 8;
  static_assert(batch % max_stage_run == 0, "a batch holds whole units");
  std::size_t k = 0;    // the next piece
  int slot = 0;         // k % slots
  unsigned phase = 0;   // (k / slots) % 2: the slot's mbarrier phase
  for (std::size_t j0 = 0; blockIdx.x + (j0 >> run_log2) * ctas < units; j0 += batch) {
    double part[batch][w] = {};  // part[batch - 1 - p]: plan block j0 + p's lane partials (a shift register)
#pragma unroll 1
    for (int p = 0; p < batch; ++p) {
      const std::size_t b = block_of(j0 + p);
      double acc[3] = {0.0, 0.0, 0.0};
      if (b < full) {
        for (int piece = 0; piece < pieces; ++piece, ++k) {
          // The lane's column into registers and the slot refilled before the adds (above).
          bulk::wait(barrier(slot), phase);
          const T* a = reinterpret_cast<const T*>(ring + slot * piece_bytes);
          T xr[piece_rows], yr[two ? piece_rows : 1];
#pragma unroll
          for (int row = 0; row < piece_rows; ++row) {
            xr[row] = a[row * plan::lanes + lane];
            if constexpr (two) yr[row] = a[(piece_rows + row) * plan::lanes + lane];
          }
          __syncwarp();  // every lane has read the slot before the copy engine refills it
          if (lane == 0) issue(k + slots, slot);
          if (++slot == slots) slot = 0, phase ^= 1u;
          if constexpr (std::is_same_v<T, float>) {
            // Odd rows widened from their bits: the conversion unit widens 16 floats a clock
            // an SM, and the last pieces of a grid, landing together, wait on it; the bits'
            // path runs beside it on the integer and FP64 units. A piece with an infinity or
            // NaN there is added again from memory through the conversion (rare; the same
            // terms; the registers need not outlive the adds).
            const double before = acc[0];
            unsigned big = 0;
#pragma unroll
            for (int row = 0; row < piece_rows; ++row) {
              if (row % 2 == 0) accumulate<kind, T>(acc, xr[row], two ? yr[row] : T(0));
              else accumulate_widened<kind>(acc, widened_by_bits(xr[row], big), two ? widened_by_bits(yr[row], big) : 0.0);
            }
            if (big >= float_not_finite) {
              acc[0] = before;
              const std::size_t at = b * plan::block_elements + piece * piece_rows * plan::lanes + lane;
#pragma unroll 1
              for (int row = 0; row < piece_rows; ++row)
                accumulate<kind, T>(acc, x[at + row * plan::lanes], two ? y[at + row * plan::lanes] : T(0));
            }
          } else {
#pragma unroll
            for (int row = 0; row < piece_rows; ++row) accumulate<kind, T>(acc, xr[row], two ? yr[row] : T(0));
          }
        }
      } else if (b < blocks) {
        // The short last plan block: read in place, element by element in each lane's order.
        for (std::size_t e = b * plan::block_elements + lane; e < n; e += plan::lanes)
          accumulate<kind, T>(acc, x[e], two ? y[e] : T(0));
      }
#pragma unroll
      for (int q = batch - 1; q > 0; --q)
#pragma unroll
        for (int c = 0; c < w; ++c) part[q][c] = part[q - 1][c];
#pragma unroll
      for (int c = 0; c < w; ++c) part[0][c] = acc[c];
    }
    // Lane p < 8: plan block j0 + p's root, the log2 R levels of its unit's warp node (cut where
    // the unit's plan blocks end), the node written by the unit's first lane.
    const std::size_t i = (j0 + lane % batch) >> run_log2;  // the CUDA block's unit
    const int r = lane & static_cast<int>(run - 1);
    const std::size_t unit_first = first + i * stride;
    const int present = unit_first < blocks ? static_cast<int>(blocks - unit_first < run ? blocks - unit_first : run) : 0;
#pragma unroll
    for (int c = 0; c < w; ++c) {
      double v[batch];
#pragma unroll
      for (int p = 0; p < batch; ++p) v[p] = part[batch - 1 - p][c];
      double node = lane_trees<batch>(v, lane);
      for (int o = 1; o < static_cast<int>(run); o *= 2) {
        const double other = __shfl_down_sync(0xffffffffu, node, o);
        if ((r & (2 * o - 1)) == 0 && r + o < present) node = plan::add(node, other);
      }
      if (lane < batch && r == 0 && blockIdx.x + i * ctas < units) unit_space[(i * w + c) * warps_per_cta + warp] = node;
    }
  }
  // The units' nodes, a thread each: the tree of the unit's warp nodes, cut where its plan
  // blocks end.
  __syncthreads();
  for (std::size_t u = blockIdx.x + threadIdx.x * ctas, i = threadIdx.x; u < units;
       u += threads_per_cta * ctas, i += threads_per_cta) {
    const std::size_t m = (blocks - u * unit_blocks + run - 1) >> run_log2;  // warps with plan blocks
#pragma unroll
    for (int c = 0; c < w; ++c) {
      double v[warps_per_cta];
#pragma unroll
      for (int j = 0; j < warps_per_cta; ++j) v[j] = unit_space[(i * w + c) * warps_per_cta + j];
      nodes[u * w + c] = register_tree<warps_per_cta>(v, m < warps_per_cta ? static_cast<int>(m) : warps_per_cta);
    }
  }
  if (last_to_arrive(header, last))
    finish_tree<kind, T>(nodes, units, header, out, node_out, host_header, warp_nodes);
#elif defined(__CUDA_ARCH__)
  __trap();  // never launched there: a launch would be a bug, made loud instead of a result never written
#endif
}

// min/max: the winner of a (value, index) pair and another, as the plan says.
__device__ __forceinline__ void take(bool is_min, double& v, unsigned long long& i, double ov, unsigned long long oi) {
  if (plan::beats(is_min, ov, oi, v, i)) v = ov, i = oi;
}

// The winner of the CUDA block's candidates (one a thread), in thread 0.
__device__ __forceinline__ void block_winner(bool is_min, double& v, unsigned long long& at, double* sh,
                                             unsigned long long* sh_index) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  for (int offset = 16; offset > 0; offset /= 2)
    take(is_min, v, at, __shfl_down_sync(0xffffffffu, v, offset), __shfl_down_sync(0xffffffffu, at, offset));
  if (lane == 0) sh[warp] = v, sh_index[warp] = at;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int k = 1; k < warps_per_cta; ++k) take(is_min, v, at, sh[k], sh_index[k]);
}

// The element as the type it is compared in: float for f32 and 16-bit data (exact), double.
template <class T>
using compare_t = std::conditional_t<sizeof(T) == 8, double, float>;
template <class T>
__device__ __forceinline__ compare_t<T> as_compared(T v) {
  if constexpr (sizeof(T) == 8) return v;
  else return static_cast<float>(as_double(v));
}

constexpr int extremum_loads = 8;  // 16-byte vectors a thread has in flight (128 bytes)

// min/max. The winner under the plan's total order (beats) is the same for every grouping,
// so the kernel reads as fast as it can: CUDA block b takes elements [b per, (b + 1) per)
// and its threads read them as 16-byte vectors, `extremum_loads` in flight, each thread
// visiting its elements in increasing index order. In that order a strictly better
// element is all a thread needs to track: equal values keep the first index, and a NaN,
// once held, is beaten by nothing (the first NaN wins). The up to V - 1 elements before
// the first 16-byte boundary and after the last are compared by the plan's order itself.
// Each CUDA block writes its winner; the last to finish (one acq_rel atomic, as the sums)
// picks the winner of those.
template <Kind kind, class T>
__global__ void __launch_bounds__(threads_per_cta)
    extremum_kernel(const T* __restrict__ x, std::size_t n, std::size_t per_cta, Header* header, double* partials,
                    unsigned long long* indices, Header* host_header) {
  using C = compare_t<T>;
  constexpr bool is_min = kind == Kind::min;
  constexpr int V = static_cast<int>(16 / sizeof(T)), U = extremum_loads;
  constexpr unsigned none_at = ~0u;
  __shared__ double sh[warps_per_cta];
  __shared__ unsigned long long sh_index[warps_per_cta];
  __shared__ bool last;
  wait_for_previous_grid();  // as sum_kernel
  const unsigned t = threadIdx.x;
  const C worst = is_min ? C(__longlong_as_double(0x7ff0000000000000LL)) : C(__longlong_as_double(0xfff0000000000000LL));

  const std::size_t lo = static_cast<std::size_t>(blockIdx.x) * per_cta;
  const std::size_t hi = n - lo < per_cta ? n : lo + per_cta;
  const std::size_t skew = (16 - reinterpret_cast<std::uintptr_t>(x + lo) % 16) % 16 / sizeof(T);
  const std::size_t a = hi - lo < skew ? hi : lo + skew;  // the first element on a 16-byte boundary
  const unsigned vectors = static_cast<unsigned>((hi - a) / V);  // < 2^31: the host bounds per_cta
  const std::size_t b = a + static_cast<std::size_t>(vectors) * V;
  const T* xa = x + a;

  // The thread's own elements, as vectors t, t + threads, ...: the best so far and where
  // (vector number, element within it).
  C best = worst;
  unsigned at_vector = none_at;
  int at_element = 0;
  if (t < vectors) best = as_compared(xa[static_cast<std::size_t>(t) * V]), at_vector = t;
  const uint4* va = reinterpret_cast<const uint4*>(xa);
  // Vector number j's elements in order. Not (v at least as good as best), and best not
  // NaN: a NaN v beats a number, nothing beats a NaN.
  const auto visit = [&](const uint4& w, unsigned j) {
    T e[V];
    static_assert(sizeof(e) == sizeof(w), "one vector of 16 bytes");
    memcpy(&e, &w, sizeof(w));
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const C v = as_compared(e[k]);
      const bool better = (is_min ? !(v >= best) : !(v <= best)) && best == best;
      best = better ? v : best;
      at_vector = better ? j : at_vector;
      at_element = better ? k : at_element;
    }
  };
  // Whole batches of U vectors, software-pipelined as the sums' rows: the next batch is
  // loaded before this one is compared, so that its loads are in flight meanwhile (guarded
  // loads of one batch came out of ptxas interleaved with the compares, 2 in flight).
  constexpr unsigned batch = threads_per_cta * U;
  unsigned j = t;
  if (j + (U - 1) * threads_per_cta < vectors) {
    uint4 now[U];
#pragma unroll
    for (int u = 0; u < U; ++u) now[u] = __ldg(va + j + u * threads_per_cta);
    for (;;) {
      const bool more = j + batch + (U - 1) * threads_per_cta < vectors;
      uint4 next[U];
      if (more)
#pragma unroll
        for (int u = 0; u < U; ++u) next[u] = __ldg(va + j + batch + u * threads_per_cta);
#pragma unroll
      for (int u = 0; u < U; ++u) visit(now[u], j + u * threads_per_cta);
      j += batch;
      if (!more) break;
#pragma unroll
      for (int u = 0; u < U; ++u) now[u] = next[u];
    }
  }
  for (; j < vectors; j += threads_per_cta) visit(__ldg(va + j), j);
  double v = static_cast<double>(best);
  unsigned long long at = at_vector == none_at ? ~0ull : a + static_cast<std::size_t>(at_vector) * V + at_element;
  // The elements off the vectors: before a (threads 0..V-1) and from b (threads 16..16+V-1).
  if (t < a - lo) take(is_min, v, at, as_double(x[lo + t]), lo + t);
  if (t >= 16 && t - 16 < hi - b) take(is_min, v, at, as_double(x[b + t - 16]), b + t - 16);
  block_winner(is_min, v, at, sh, sh_index);
  if (t == 0) {
    partials[blockIdx.x] = v;
    indices[blockIdx.x] = at;
    // Release of this block's winner, acquire of every other's (see sum_kernel).
    ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> finished(header->finished);
    last = finished.fetch_add(1u, ::cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  v = is_min ? __longlong_as_double(0x7ff0000000000000LL) : __longlong_as_double(0xfff0000000000000LL);
  at = ~0ull;
  // (The barrier after `last` also ends thread 0's reads of sh above.)
  for (unsigned i = t; i < gridDim.x; i += threads_per_cta) take(is_min, v, at, __ldcg(partials + i), __ldcg(indices + i));
  block_winner(is_min, v, at, sh, sh_index);
  if (t == 0) {
    // The winner's value with the bits the plan gives it (ew::half's exact conversion
    // keeps a NaN's payload; the hardware's need not).
    if constexpr (sizeof(T) == 2) v = static_cast<double>(x[at]);
    header->value = v;
    header->index = at;
    if (host_header) host_header->value = v, host_header->index = at;
    header->finished = 0;
  }
}

// Where a launch writes, and how it is shaped.
struct Launch {
  std::size_t blocks, run_blocks, runs, ctas;  // staged: runs are the groups of plan blocks
  bool vector_ok;
  int slots;                // staged: pieces a warp's ring holds
  int run_log2;             // staged: log2 of the plan blocks a warp takes in a unit
  std::size_t stage_bytes;  // staged: the CUDA block's ring
  bool dependent;  // programmatic dependent launch
  Header* header;
  Header* host_header;  // the device's view of the host's copy, or null: the result stays on the device
  double* partials;
  unsigned long long* indices;
  cudaStream_t stream;
};

// Where the root goes in node mode (ReduceCall::node), else null.
inline double* node_result(const ReduceCall& c, const Launch& l) {
  return c.node ? (c.result ? static_cast<double*>(c.result) : &l.header->value) : nullptr;
}

constexpr std::size_t stage_bytes(int slots) {
  return std::size_t(warps_per_cta) * slots * piece_bytes + unit_space_bytes;
}

// Calls f(std::integral_constant<Kind, k>) with k = kind, one of the sums.
template <class F>
decltype(auto) visit_kind(Kind kind, F&& f) {
  switch (kind) {
    case Kind::sum: return f(std::integral_constant<Kind, Kind::sum>{});
    case Kind::asum: return f(std::integral_constant<Kind, Kind::asum>{});
    case Kind::dot: return f(std::integral_constant<Kind, Kind::dot>{});
    default: return f(std::integral_constant<Kind, Kind::norm2>{});
  }
}

template <Kind kind, class T, int V, int U>
cudaError_t launch_sum(const ReduceCall& c, const Launch& l) {
  return launch_kernel(sum_kernel<kind, T, V, U>, static_cast<unsigned>(l.ctas), 0, l.stream, l.dependent,
                       static_cast<const T*>(c.x), static_cast<const T*>(c.y), c.n, l.blocks, l.run_blocks, l.runs,
                       l.vector_ok, l.header, l.partials, c.node ? nullptr : static_cast<compute_t<T>*>(c.result),
                       node_result(c, l), l.host_header);
}

template <class T, int V, int U>
cudaError_t launch_shape(const ReduceCall& c, const Launch& l) {
  return visit_kind(c.kind, [&](auto k) { return launch_sum<decltype(k)::value, T, V, U>(c, l); });
}

template <class T>
cudaError_t launch_staged(const ReduceCall& c, const Launch& l) {
  return visit_kind(c.kind, [&](auto k) {
    return launch_kernel(staged_kernel<decltype(k)::value, T>, static_cast<unsigned>(l.ctas), l.stage_bytes,
                         l.stream, l.dependent, static_cast<const T*>(c.x), static_cast<const T*>(c.y), c.n,
                         l.blocks, l.slots, l.run_log2, l.header, l.partials,
                         c.node ? nullptr : static_cast<compute_t<T>*>(c.result), node_result(c, l), l.host_header);
  });
}

// CUDA blocks of `kernel` resident on one SM of the current device (registers decide), 0
// where the query fails.
template <class Kernel>
int occupancy(Kernel kernel) {
  int b = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, threads_per_cta, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    b = 0;
  }
  return b;
}

template <class T, int V, int U>
int resident_shape(Kind kind) {
  return visit_kind(kind, [](auto k) { return occupancy(sum_kernel<decltype(k)::value, T, V, U>); });
}

// The staged kernel of (kind, T) with `slots` pieces a warp: CUDA blocks resident on one SM,
// 0 where the device does not allow that much shared memory. The kernel is allowed the
// largest ring (or, where that is refused, this one), so that a ring allowed once stays
// allowed whichever ring is asked for next.
template <class T>
int staged_resident(Kind kind, int slots) {
  return visit_kind(kind, [slots](auto k) {
    const auto kernel = staged_kernel<decltype(k)::value, T>;
    const auto allow = [&](std::size_t bytes) {
      return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) ==
             cudaSuccess;
    };
    // A refusal is an answer, not an error for the next call: cleared, and only where one came
    // (an error the application has yet to read stays).
    int b = 0;
    const bool every_slot = allow(stage_bytes(max_stage_slots));
    if (!(every_slot || allow(stage_bytes(slots))) ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, threads_per_cta, stage_bytes(slots)) != cudaSuccess)
      b = 0, (void)cudaGetLastError();
    else if (!every_slot)
      (void)cudaGetLastError();
    return b;
  });
}

// Calls f(lanes, loads), both std::integral_constant, with the shape s when it is built for
// T (every dtype: 1x8, 1x16; 16-bit data 8x2, 8x4; f32 and f64 2x4, 2x8, 2x16; f32 4x2, 4x4,
// 4x8, as `shapes` lists them); false where it is not.
template <class T, class F>
bool visit_shape(ReduceShape s, F&& f) {
#define EW_SHAPE(V, U)                                                                  \
  if (s.lanes_per_thread == V && s.loads == U) {                                        \
    f(std::integral_constant<int, V>{}, std::integral_constant<int, U>{});              \
    return true;                                                                        \
  }
  EW_SHAPE(1, 8) EW_SHAPE(1, 16)
  if constexpr (sizeof(T) == 2) {
    EW_SHAPE(8, 2) EW_SHAPE(8, 4)
  } else {
    EW_SHAPE(2, 4) EW_SHAPE(2, 8) EW_SHAPE(2, 16)
  }
  if constexpr (sizeof(T) == 4) {
    EW_SHAPE(4, 2) EW_SHAPE(4, 4) EW_SHAPE(4, 8)
  }
#undef EW_SHAPE
  return false;
}

template <class T>
int resident(Kind kind, ReduceShape s) {
  int blocks = 0;
  visit_shape<T>(s, [&](auto v, auto u) { blocks = resident_shape<T, decltype(v)::value, decltype(u)::value>(kind); });
  return blocks;
}

int resident(DType dtype, Kind kind, ReduceShape s) {
  switch (dtype) {
    case DType::f32: return resident<float>(kind, s);
    case DType::f16: return resident<ew::half>(kind, s);
    case DType::bf16: return resident<ew::bfloat16>(kind, s);
    default: return resident<double>(kind, s);
  }
}

template <class T>
cudaError_t launch_sums(const ReduceCall& c, const Launch& l, ReduceShape s) {
  cudaError_t e = cudaSuccess;
  if (!visit_shape<T>(s, [&](auto v, auto u) { e = launch_shape<T, decltype(v)::value, decltype(u)::value>(c, l); }))
    throw Error(Errc::internal, "cuda reduction: shape " + std::to_string(s.lanes_per_thread) + "x" +
                                    std::to_string(s.loads) + " is not built");
  return e;
}

template <class T>
cudaError_t launch_extremum(const ReduceCall& c, const Launch& l) {
  const auto* x = static_cast<const T*>(c.x);
  const std::size_t per_cta = l.run_blocks * plan::block_elements;
  return launch_kernel(c.kind == Kind::min ? extremum_kernel<Kind::min, T> : extremum_kernel<Kind::max, T>,
                       static_cast<unsigned>(l.ctas), 0, l.stream, l.dependent, x, c.n, per_cta, l.header,
                       l.partials, l.indices, l.host_header);
}

// CUDA blocks of the min/max kernel resident on one SM, 0 where the query fails.
template <class T>
int resident_extremum(Kind kind) {
  return occupancy(kind == Kind::min ? extremum_kernel<Kind::min, T> : extremum_kernel<Kind::max, T>);
}

int resident_extremum(DType dtype, Kind kind) {
  switch (dtype) {
    case DType::f32: return resident_extremum<float>(kind);
    case DType::f16: return resident_extremum<ew::half>(kind);
    case DType::bf16: return resident_extremum<ew::bfloat16>(kind);
    default: return resident_extremum<double>(kind);
  }
}

bool built(ReduceShape s, DType dtype) {
  if (dtype == DType::f64 && s.lanes_per_thread > 2) return false;
  if (dtype == DType::f32 && s.lanes_per_thread > 4) return false;
  if (is_storage16(dtype) && s.lanes_per_thread != 1 && s.lanes_per_thread != 8) return false;
  for (const ReduceShape& b : shapes)
    if (b.lanes_per_thread == s.lanes_per_thread && b.loads == s.loads) return true;
  return false;
}

// The staged kernel's launch for `ctas` CUDA blocks (one wave; 0 where it does not apply):
// the ring, the units (runs: 8 R plan blocks, R raised where a CUDA block's warp nodes would
// not fit its unit space). False where it cannot take the call: the register kernel then.
bool staged_launch(Launch& l, const ReduceCall& c, const ReduceTuning& t, std::size_t ctas) {
  if (ctas == 0) return false;
  const std::size_t w = static_cast<std::size_t>(plan::width(c.kind, c.dtype == DType::f64));
  int run_log2 = 0;
  while ((1 << run_log2) < t.stage_run) ++run_log2;
  const auto units = [&](int r) { return (l.blocks + (warps_per_cta << r) - 1) / (warps_per_cta << r); };
  const auto fits = [&](int r) { return (units(r) + ctas - 1) / ctas * w <= unit_space_doubles; };
  while (!fits(run_log2) && (1 << run_log2) < max_stage_run) ++run_log2;
  if (!fits(run_log2)) return false;
  l.slots = t.stage_slots;
  l.stage_bytes = stage_bytes(l.slots);
  l.ctas = ctas;
  l.run_log2 = run_log2;
  l.run_blocks = std::size_t(warps_per_cta) << run_log2;
  l.runs = units(run_log2);
  return true;
}

std::mutex forced_mutex;
ReduceTuning forced;
thread_local SumKernel last_sum = SumKernel::none;

}  // namespace

SumKernel take_last_sum_kernel() { return std::exchange(last_sum, SumKernel::none); }

// The question Reducer::staged_blocks asks, for the (f32 sum) kernel whose shared memory every
// staged kernel has.
bool staged_kernel_supported(int device, int slots) {
  const GpuContext gpu(device, nullptr, "cuda");
  const ContextScope scope(gpu.get(), "cuda");
  int major = 0, arch = 0;
  return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         sm90_features(major) && kernel_architecture(arch) == cudaSuccess && sm90_features(arch / 10) &&
         staged_resident<float>(Kind::sum, slots) > 0;
}

const ReduceShape* reduce_shapes(std::size_t* count) {
  *count = sizeof(shapes) / sizeof(shapes[0]);
  return shapes;
}

ReduceTuning default_reduce_tuning(Kind kind, DType dtype, std::size_t n, int sm_count, double memory_bytes_per_second) {
  const bool one_sum = kind == Kind::sum || kind == Kind::asum;
  const ReduceShape shape = dtype == DType::f64      ? (one_sum ? default_shape_f64_sum : default_shape_f64)
                            : is_storage16(dtype) ? default_shape_16
                                                  : default_shape_f32;
  const std::size_t sms = static_cast<std::size_t>(sm_count > 0 ? sm_count : 1);
  ReduceTuning t;
  t.lanes_per_thread = plan::block_count(n) >= sms * vector_lanes_from_blocks_per_sm ? shape.lanes_per_thread : 1;
  t.loads = t.lanes_per_thread == shape.lanes_per_thread ? shape.loads : 16;
  t.runs_per_sm = default_runs_per_sm;
  t.ctas_per_sm = default_ctas_per_sm;
  t.run_blocks = 0;
  t.dependent_launch = 0;
  t.mapped_result = 0;
  const std::size_t per_sm = plan::block_count(n) / sms;
  const auto in = [per_sm](StagedRange r) { return per_sm >= r.from && per_sm < r.below; };
  const double per_sm_bytes_per_second = memory_bytes_per_second / static_cast<double>(sms);
  const bool slow_memory_per_sm =
      per_sm_bytes_per_second > 0 && per_sm_bytes_per_second < fast_memory_bytes_per_second_per_sm;
  const bool fast_memory_per_sm = per_sm_bytes_per_second >= fast_memory_bytes_per_second_per_sm;
  const bool staged =
      (kind == Kind::sum && dtype == DType::f32 && in(fast_memory_per_sm ? staged_f32_sum_fast_memory : staged_sum)) ||
      (kind == Kind::sum && dtype == DType::f64 && in(fast_memory_per_sm ? staged_f64_sum_fast_memory : staged_sum)) ||
      (dtype == DType::f64 && ((kind == Kind::norm2 && in(staged_norm2_f64)) || (kind == Kind::dot && in(staged_dot_f64)))) ||
      (dtype == DType::f32 && kind == Kind::dot &&
       ((slow_memory_per_sm && in(staged_dot_f32_slow_memory)) || (fast_memory_per_sm && in(staged_dot_f32_fast_memory))));
  t.staged = staged ? 1 : -1;
  t.stage_slots = default_stage_slots;
  t.stage_ctas_per_sm = -1;
  if (kind == Kind::sum && dtype == DType::f32 && fast_memory_per_sm) {
    t.stage_slots = fast_memory_f32_sum_stage_slots;
    t.stage_ctas_per_sm = fast_memory_f32_sum_stage_ctas_per_sm;
  }
  // Units of 8 R plan blocks: the smallest R with at most staged_units of them.
  t.stage_run = 1;
  while (t.stage_run < max_stage_run && plan::block_count(n) > staged_units * warps_per_cta * t.stage_run)
    t.stage_run *= 2;
  if (kind == Kind::sum && dtype == DType::f32 && fast_memory_per_sm && per_sm >= fast_memory_f32_sum_long_units_from &&
      t.stage_run < fast_memory_f32_sum_stage_run)
    t.stage_run = fast_memory_f32_sum_stage_run;
  return t;
}

void set_reduce_tuning(const ReduceTuning& t) {
  if (t.lanes_per_thread != 0 || t.loads != 0) {
    bool known = false;
    for (const ReduceShape& s : shapes) known |= s.lanes_per_thread == t.lanes_per_thread && s.loads == t.loads;
    if (!known)
      throw Error(Errc::invalid_argument, "reduce tuning: lanes_per_thread " + std::to_string(t.lanes_per_thread) +
                                              " with loads " + std::to_string(t.loads) + " is not built");
  }
  if (t.run_blocks != 0 && (t.run_blocks > max_run_blocks || (t.run_blocks & (t.run_blocks - 1)) != 0))
    throw Error(Errc::invalid_argument, "reduce tuning: run_blocks " + std::to_string(t.run_blocks) +
                                            " is not a power of two in 1..2^20");
  if (t.runs_per_sm < 0 || t.ctas_per_sm < -1)
    throw Error(Errc::invalid_argument, "reduce tuning: runs_per_sm must be >= 0 and ctas_per_sm >= -1");
  if (t.dependent_launch < -1 || t.dependent_launch > 0)
    throw Error(Errc::invalid_argument, "reduce tuning: dependent_launch must be 0 or -1");
  if (t.mapped_result < -1 || t.mapped_result > 0)
    throw Error(Errc::invalid_argument, "reduce tuning: mapped_result must be 0 or -1");
  if (t.staged < -1 || t.staged > 1)
    throw Error(Errc::invalid_argument, "reduce tuning: staged must be -1, 0 or 1");
  if (t.stage_slots != 0 && (t.stage_slots < 1 || t.stage_slots > max_stage_slots))
    throw Error(Errc::invalid_argument, "reduce tuning: stage_slots must be 1, 2 or 3");
  if (t.stage_ctas_per_sm < -1 || t.stage_ctas_per_sm > 8)
    throw Error(Errc::invalid_argument, "reduce tuning: stage_ctas_per_sm must be -1..8");
  if (t.stage_run < 0 || t.stage_run > max_stage_run || (t.stage_run & (t.stage_run - 1)) != 0)
    throw Error(Errc::invalid_argument, "reduce tuning: stage_run must be 0, 1, 2, 4 or 8");
  const std::lock_guard<std::mutex> lock(forced_mutex);
  forced = t;
}

void Reducer::reserve(std::size_t bytes, cudaStream_t stream) {
  if (bytes <= workspace_bytes_) return;
  if (workspace_) cudaFree(workspace_), workspace_ = nullptr, workspace_bytes_ = 0;
  check(cudaMalloc(&workspace_, bytes), "cudaMalloc of the reduction workspace");
  // The counter starts at 0; every launch's last CUDA block leaves it at 0. On the
  // context's stream: a non-blocking stream is not ordered after the legacy default one.
  check(cudaMemsetAsync(workspace_, 0, sizeof(Header), stream), "cudaMemsetAsync of the reduction workspace");
  workspace_bytes_ = bytes;
}

// CUDA blocks an SM of the staged kernel for this call, 0 where it does not apply: sm_90+
// (the copy engine), f32 or f64 sums, operands 16-byte aligned (the copy engine's rule),
// the tuning asking for it and the device allowing its shared memory; at most the tuning's
// stage_ctas_per_sm.
int Reducer::staged_blocks(const ReduceCall& c, const ReduceTuning& t, int major) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(c.x) % 16 == 0 &&
                       (c.kind != Kind::dot || reinterpret_cast<std::uintptr_t>(c.y) % 16 == 0);
  if (!sm90_features(major) || t.staged <= 0 || !aligned || (c.dtype != DType::f32 && c.dtype != DType::f64)) return 0;
  int& b = staged_resident_[c.dtype == DType::f64][static_cast<int>(c.kind)][t.stage_slots];
  if (b == 0) {
    b = c.dtype == DType::f64 ? staged_resident<double>(c.kind, t.stage_slots)
                              : staged_resident<float>(c.kind, t.stage_slots);
    if (b == 0) b = -1;
  }
  if (b <= 0) return 0;
  return t.stage_ctas_per_sm > 0 && t.stage_ctas_per_sm < b ? t.stage_ctas_per_sm : b;
}

// CUDA blocks an SM of the one-pass kernel for this call (the min/max kernel where shape is
// null), asked of this context's device once: another GPU of the process may run other
// machine code or have a smaller SM. A failed query is asked again next time, 1 meanwhile.
int Reducer::resident_blocks(const ReduceCall& c, const ReduceShape* shape) {
  const int dtype = static_cast<int>(c.dtype), kind = static_cast<int>(c.kind);
  int* b = nullptr;
  if (!shape) {
    b = &extremum_resident_[dtype][c.kind == Kind::min ? 0 : 1];
  } else {
    int k = 0;
    while (k < reduce_shape_count &&
           !(shapes[k].lanes_per_thread == shape->lanes_per_thread && shapes[k].loads == shape->loads))
      ++k;
    if (k == reduce_shape_count || kind >= 4) return 1;  // not a built shape: the launch reports it
    b = &sum_resident_[dtype][kind][k];
  }
  if (*b == 0) *b = shape ? resident(c.dtype, c.kind, *shape) : resident_extremum(c.dtype, c.kind);
  return *b > 0 ? *b : 1;
}

Reducer::~Reducer() {
  if (workspace_) cudaFree(workspace_);
  if (host_result_) cudaFreeHost(host_result_);
}

ReduceResult Reducer::run(const ReduceCall& c, cudaStream_t stream, const LaunchShape& device) {
  ReduceTuning t = default_reduce_tuning(c.kind, c.dtype, c.n, device.sm_count, device.memory_bytes_per_second);
  {
    const std::lock_guard<std::mutex> lock(forced_mutex);
    if (forced.lanes_per_thread) t.lanes_per_thread = forced.lanes_per_thread, t.loads = forced.loads;
    if (forced.runs_per_sm) t.runs_per_sm = forced.runs_per_sm;
    if (forced.ctas_per_sm) t.ctas_per_sm = forced.ctas_per_sm;
    t.run_blocks = forced.run_blocks;
    if (forced.dependent_launch) t.dependent_launch = forced.dependent_launch;
    if (forced.mapped_result) t.mapped_result = forced.mapped_result;
    if (forced.staged) t.staged = forced.staged;
    if (forced.stage_slots) t.stage_slots = forced.stage_slots;
    if (forced.stage_ctas_per_sm) t.stage_ctas_per_sm = forced.stage_ctas_per_sm;
    if (forced.stage_run) t.stage_run = forced.stage_run;
  }
  const ReduceShape shape{t.lanes_per_thread, t.loads};
  if (!built(shape, c.dtype))
    throw Error(Errc::invalid_argument, std::string("cuda reduction: lanes_per_thread ") +
                                            std::to_string(t.lanes_per_thread) + " is not built for " + to_string(c.dtype));
  const std::size_t sms = static_cast<std::size_t>(device.sm_count > 0 ? device.sm_count : 1);
  const bool extremum = c.kind == Kind::min || c.kind == Kind::max;
  if (c.node && (extremum || plan::width(c.kind, c.dtype == DType::f64) != 1))
    throw Error(Errc::internal, std::string(c.call) + ": node mode takes sums of one accumulator");
  Launch l{};
  l.stream = stream;
  l.dependent = sm90_features(device.major) && t.dependent_launch == 0;
  l.blocks = plan::block_count(c.n);
  if (extremum) {
    // One wave: the CUDA blocks that fit on the GPU share the plan blocks evenly (a forced
    // run size is the plan blocks per CUDA block instead; the grid cap does not apply), at
    // most 2^30 elements a CUDA block so that its threads count vectors in 32 bits.
    const std::size_t wave = sms * static_cast<std::size_t>(resident_blocks(c, nullptr));
    std::size_t per_cta = t.run_blocks ? t.run_blocks : (l.blocks + wave - 1) / wave;
    if (per_cta == 0) per_cta = 1;  // n = 0 (the API answers it before this; no division by 0)
    const std::size_t most = (std::size_t(1) << 30) / plan::block_elements;
    l.run_blocks = per_cta < most ? per_cta : most;
    per_cta = l.run_blocks;
    l.runs = l.ctas = (l.blocks + per_cta - 1) / per_cta;
  } else if (staged_launch(l, c, t, sms * static_cast<std::size_t>(staged_blocks(c, t, device.major)))) {
    // The staged kernel: its runs are units of plan blocks, a partial (node) each.
  } else {
    const std::size_t lanes = static_cast<std::size_t>(t.lanes_per_thread);
    std::size_t run = t.run_blocks;
    if (!run) {
      const int per_sm = t.runs_per_sm > 0 ? t.runs_per_sm
                                           : warps_per_cta * resident_blocks(c, &shape);
      const std::size_t target = sms * static_cast<std::size_t>(per_sm);
      run = 1;
      while (run < max_run_blocks && (l.blocks + run - 1) / run > target) run *= 2;
      if (t.runs_per_sm <= 0 && run > default_longest_run) run = default_longest_run;
    }
    l.run_blocks = run < lanes ? lanes : run;
    l.runs = (l.blocks + l.run_blocks - 1) / l.run_blocks;
    l.ctas = (l.runs + warps_per_cta - 1) / warps_per_cta;
    if (t.ctas_per_sm > 0 && l.ctas > sms * static_cast<std::size_t>(t.ctas_per_sm))
      l.ctas = sms * static_cast<std::size_t>(t.ctas_per_sm);
    const std::size_t align = lanes * size_of(c.dtype);
    l.vector_ok = reinterpret_cast<std::uintptr_t>(c.x) % align == 0 &&
                  (c.kind != Kind::dot || reinterpret_cast<std::uintptr_t>(c.y) % align == 0);
  }
  if (l.ctas > 0x7fffffffu) throw Error(Errc::size_overflow, "cuda reduction: too many elements for one grid");
  const std::size_t partial_bytes = l.runs * 3 * sizeof(double), index_bytes = l.runs * sizeof(unsigned long long);
  // Workspace sizes are kept when the stream is idle: a larger one is made after a sync.
  if (sizeof(Header) + partial_bytes + index_bytes > workspace_bytes_) {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize before growing the reduction workspace");
    reserve(2 * (sizeof(Header) + partial_bytes + index_bytes), stream);
  }
  if (!host_result_) {
    check(cudaHostAlloc(&host_result_, sizeof(Header), cudaHostAllocMapped | cudaHostAllocPortable),
          "cudaHostAlloc of the reduction result");
    // Where the device cannot write it (no mapped host memory), the result is copied back.
    if (cudaHostGetDevicePointer(&host_view_, host_result_, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      host_view_ = nullptr;
    }
  }
  auto* result = static_cast<Header*>(host_result_);
  const bool mapped = host_view_ && t.mapped_result == 0;
  if (!c.result) {
    // Poisoned first: a result the kernel did not write reads as NaN, not as the last call's.
    result->value = std::numeric_limits<double>::quiet_NaN();
    result->index = ~0ull;
    if (mapped) l.host_header = static_cast<Header*>(host_view_);
  }
  l.header = static_cast<Header*>(workspace_);
  l.partials = reinterpret_cast<double*>(static_cast<char*>(workspace_) + sizeof(Header));
  l.indices = reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(l.partials) + partial_bytes);
  cudaError_t e;
  switch (c.dtype) {
    case DType::f32: e = extremum ? launch_extremum<float>(c, l) : l.slots ? launch_staged<float>(c, l) : launch_sums<float>(c, l, shape); break;
    case DType::f16: e = extremum ? launch_extremum<ew::half>(c, l) : launch_sums<ew::half>(c, l, shape); break;
    case DType::bf16: e = extremum ? launch_extremum<ew::bfloat16>(c, l) : launch_sums<ew::bfloat16>(c, l, shape); break;
    default: e = extremum ? launch_extremum<double>(c, l) : l.slots ? launch_staged<double>(c, l) : launch_sums<double>(c, l, shape);
  }
  check(e, "reduction kernel launch");
  if (!extremum) last_sum = l.slots ? SumKernel::staged : SumKernel::registers;
  if (c.result) return {0.0, 0, true};  // the kernel stores it; nothing to wait for
  if (!mapped)
    check(cudaMemcpyAsync(host_result_, l.header, sizeof(Header), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync of the reduction result");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after a reduction");
  return {result->value, static_cast<std::uint64_t>(result->index)};
}

}  // namespace ew::detail::cuda
