// Reductions on the GPU in one launch, on the plan's tree (ew_internal/reduce_plan.hpp).
//
// A warp computes one plan block: lane j of the warp is the plan's lane j, adding the
// block's elements j, j + 32, ... in order (coalesced: a warp reads 32 consecutive
// elements per step, 16 steps of loads issued before their adds), then the 32 lanes
// meet by the canonical tree through shuffles (offsets 1, 2, 4, 8, 16). A CUDA block of
// 8 warps owns an aligned power-of-two run of plan blocks (G, chosen by size: the grid
// never changes the bits, since an aligned run is a node of the canonical tree), combines
// its blocks' partials by the same tree in shared memory and writes one partial. The
// last CUDA block to finish (a __threadfence and an atomic counter) combines those
// partials by the tree, finishes (sqrt, Blue's scaling, rounding to the data's type)
// and writes the result; the host copies it back.
//
// Every add and multiply is __dadd_rn/__dmul_rn (plan::add/mul): no contraction, the
// same bits as every CPU backend. The file is also compiled with --fmad=false.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "cuda_error.hpp"
#include "reduce.hpp"

namespace ew::detail::cuda {

namespace {

using plan::Kind;

constexpr int warps_per_cta = 8;
constexpr int threads_per_cta = warps_per_cta * 32;
constexpr std::size_t max_blocks_per_cta = 256;  // shared memory: 3 x 256 doubles
constexpr int loads_in_flight = 16;               // per lane, before their adds

// Workspace layout: the counter, the result, then per CUDA block W partials and an index.
struct Header {
  unsigned int finished;  // CUDA blocks done; the last one resets it to 0
  unsigned int pad;
  double value;
  unsigned long long index;
};

template <Kind kind, class T>
struct Traits {
  static constexpr bool extremum = kind == Kind::min || kind == Kind::max;
  static constexpr int w = kind == Kind::norm2 && sizeof(T) == 8 ? 3 : 1;
};

template <Kind kind, class T>
__device__ __forceinline__ void accumulate(double (&acc)[3], T xv, T yv) {
  const double v = static_cast<double>(xv);
  if constexpr (kind == Kind::sum) acc[0] = plan::add(acc[0], plan::term_sum(v));
  else if constexpr (kind == Kind::asum) acc[0] = plan::add(acc[0], plan::term_asum(v));
  else if constexpr (kind == Kind::dot) acc[0] = plan::add(acc[0], plan::term_dot(v, static_cast<double>(yv)));
  else if constexpr (sizeof(T) == 4) acc[0] = plan::add(acc[0], plan::term_square(v));
  else {
    const int c = plan::norm2_class(v);
    const double t = plan::norm2_term(v, c);
    // Adding +0 to the other two leaves them as they are (they are >= +0 or NaN).
    acc[0] = plan::add(acc[0], c == 0 ? t : 0.0);
    acc[1] = plan::add(acc[1], c == 1 ? t : 0.0);
    acc[2] = plan::add(acc[2], c == 2 ? t : 0.0);
  }
}

// The plan's lanes of block `b` for this lane, then the lane tree; lane 0 holds the result.
template <Kind kind, class T>
__device__ void block_partial(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, std::size_t b,
                              int lane, double (&acc)[3]) {
  constexpr int w = Traits<kind, T>::w;
  for (int c = 0; c < 3; ++c) acc[c] = 0.0;
  const std::size_t begin = b * plan::block_elements;
  const T* xb = x + begin + lane;
  const T* yb = kind == Kind::dot ? y + begin + lane : nullptr;
  if (n - begin >= plan::block_elements) {
    constexpr int steps = static_cast<int>(plan::block_elements / plan::lanes);
    for (int r0 = 0; r0 < steps; r0 += loads_in_flight) {
      T xv[loads_in_flight], yv[loads_in_flight];
#pragma unroll
      for (int u = 0; u < loads_in_flight; ++u) {
        xv[u] = __ldg(xb + (r0 + u) * plan::lanes);
        yv[u] = kind == Kind::dot ? __ldg(yb + (r0 + u) * plan::lanes) : T(0);
      }
#pragma unroll
      for (int u = 0; u < loads_in_flight; ++u) accumulate<kind, T>(acc, xv[u], yv[u]);
    }
  } else {
    const std::size_t count = n - begin;
    for (std::size_t i = static_cast<std::size_t>(lane); i < count; i += plan::lanes)
      accumulate<kind, T>(acc, x[begin + i], kind == Kind::dot ? y[begin + i] : T(0));
  }
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2)
#pragma unroll
    for (int c = 0; c < w; ++c) {
      const double other = __shfl_down_sync(0xffffffffu, acc[c], offset);
      if ((lane & (2 * offset - 1)) == 0) acc[c] = plan::add(acc[c], other);
    }
}

// The canonical tree over sh[c][0..m) in place (iterative pairing: pairs (2i, 2i+1),
// an odd last one carried up); every thread of the CUDA block calls it.
template <int w>
__device__ void shared_tree(double (*sh)[max_blocks_per_cta], int m) {
  const int t = static_cast<int>(threadIdx.x);
  while (m > 1) {
    const int half = m / 2;
    double v[3] = {0.0, 0.0, 0.0};
    const bool pair = t < half, carry = (m & 1) && t == half;
#pragma unroll
    for (int c = 0; c < w; ++c) {
      if (pair) v[c] = plan::add(sh[c][2 * t], sh[c][2 * t + 1]);
      if (carry) v[c] = sh[c][m - 1];
    }
    __syncthreads();
    if (pair || carry)
#pragma unroll
      for (int c = 0; c < w; ++c) sh[c][t] = v[c];
    __syncthreads();
    m = half + (m & 1);
  }
}

// min/max: the winner of a (value, index) pair and another, as the plan says.
__device__ __forceinline__ void take(bool is_min, double& v, unsigned long long& i, double ov, unsigned long long oi) {
  if (plan::beats(is_min, ov, oi, v, i)) v = ov, i = oi;
}

template <Kind kind, class T>
__global__ void __launch_bounds__(threads_per_cta)
    reduce_kernel(const T* __restrict__ x, const T* __restrict__ y, std::size_t n, std::size_t blocks,
                  std::size_t per_cta, Header* header, double* partials, unsigned long long* indices, T* out) {
  constexpr int w = Traits<kind, T>::w;
  constexpr bool extremum = Traits<kind, T>::extremum;
  constexpr bool is_min = kind == Kind::min;
  __shared__ double sh[3][max_blocks_per_cta];
  __shared__ unsigned long long sh_index[max_blocks_per_cta];
  __shared__ bool last;
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * per_cta;
  const std::size_t mine = (blocks - first < per_cta ? blocks - first : per_cta);

  // 1. This CUDA block's plan blocks, a warp at a time.
  for (std::size_t k = static_cast<std::size_t>(warp); k < mine; k += warps_per_cta) {
    const std::size_t b = first + k;
    if constexpr (extremum) {
      const std::size_t begin = b * plan::block_elements;
      const std::size_t end = n - begin < plan::block_elements ? n : begin + plan::block_elements;
      double v = is_min ? __longlong_as_double(0x7ff0000000000000LL) : __longlong_as_double(0xfff0000000000000LL);
      unsigned long long at = ~0ull;
      for (std::size_t i = begin + static_cast<std::size_t>(lane); i < end; i += plan::lanes)
        take(is_min, v, at, static_cast<double>(x[i]), i);
      for (int offset = 16; offset > 0; offset /= 2)
        take(is_min, v, at, __shfl_down_sync(0xffffffffu, v, offset), __shfl_down_sync(0xffffffffu, at, offset));
      if (lane == 0) sh[0][k] = v, sh_index[k] = at;
    } else {
      double acc[3];
      block_partial<kind, T>(x, y, n, b, lane, acc);
      if (lane == 0)
#pragma unroll
        for (int c = 0; c < w; ++c) sh[c][k] = acc[c];
    }
  }
  __syncthreads();

  // 2. Their node of the tree (any order for min/max: the winner is exact).
  if constexpr (extremum) {
    if (threadIdx.x == 0) {
      double v = sh[0][0];
      unsigned long long at = sh_index[0];
      for (std::size_t k = 1; k < mine; ++k) take(is_min, v, at, sh[0][k], sh_index[k]);
      partials[blockIdx.x] = v;
      indices[blockIdx.x] = at;
    }
  } else {
    shared_tree<w>(sh, static_cast<int>(mine));
    if (threadIdx.x == 0)
#pragma unroll
      for (int c = 0; c < w; ++c) partials[blockIdx.x * w + c] = sh[c][0];
  }

  // 3. The last CUDA block to finish combines every node.
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&header->finished, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const std::size_t ctas = gridDim.x;
  // Each thread first takes an aligned power-of-two run of nodes (a node itself).
  std::size_t run = 1;
  while (run * threads_per_cta < ctas) run *= 2;
  const std::size_t lo = static_cast<std::size_t>(threadIdx.x) * run;
  const std::size_t count = lo < ctas ? (ctas - lo < run ? ctas - lo : run) : 0;
  const int nodes = static_cast<int>((ctas + run - 1) / run);
  if constexpr (extremum) {
    double v = is_min ? __longlong_as_double(0x7ff0000000000000LL) : __longlong_as_double(0xfff0000000000000LL);
    unsigned long long at = ~0ull;
    for (std::size_t i = lo; i < lo + count; ++i) take(is_min, v, at, __ldcg(partials + i), __ldcg(indices + i));
    for (int offset = 16; offset > 0; offset /= 2)
      take(is_min, v, at, __shfl_down_sync(0xffffffffu, v, offset), __shfl_down_sync(0xffffffffu, at, offset));
    if (lane == 0) sh[0][warp] = v, sh_index[warp] = at;
    __syncthreads();
    if (threadIdx.x == 0) {
      v = sh[0][0], at = sh_index[0];
      for (int k = 1; k < warps_per_cta; ++k) take(is_min, v, at, sh[0][k], sh_index[k]);
      header->value = v;
      header->index = at;
      header->finished = 0;
    }
  } else {
    if (count > 0)
#pragma unroll
      for (int c = 0; c < w; ++c)
        sh[c][threadIdx.x] = plan::pair_tree_of(count, [&](std::size_t i) { return __ldcg(partials + (lo + i) * w + c); });
    __syncthreads();
    shared_tree<w>(sh, nodes);
    if (threadIdx.x == 0) {
      const double acc[3] = {sh[0][0], w > 1 ? sh[1][0] : 0.0, w > 2 ? sh[2][0] : 0.0};
      header->value = plan::finish(kind, sizeof(T) == 8, acc);
      header->index = 0;
      if (out) *out = static_cast<T>(header->value);
      header->finished = 0;
    }
  }
}

template <Kind kind, class T>
cudaError_t launch(const ReduceCall& c, std::size_t per_cta, Header* header, double* partials,
                   unsigned long long* indices, cudaStream_t stream) {
  T* out = static_cast<T*>(c.result);
  const std::size_t blocks = plan::block_count(c.n);
  const std::size_t ctas = (blocks + per_cta - 1) / per_cta;
  reduce_kernel<kind, T><<<static_cast<unsigned>(ctas), threads_per_cta, 0, stream>>>(
      static_cast<const T*>(c.x), static_cast<const T*>(c.y), c.n, blocks, per_cta, header, partials, indices, out);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_kind(const ReduceCall& c, std::size_t per_cta, Header* h, double* p, unsigned long long* i,
                        cudaStream_t s) {
  switch (c.kind) {
    case Kind::sum: return launch<Kind::sum, T>(c, per_cta, h, p, i, s);
    case Kind::asum: return launch<Kind::asum, T>(c, per_cta, h, p, i, s);
    case Kind::dot: return launch<Kind::dot, T>(c, per_cta, h, p, i, s);
    case Kind::norm2: return launch<Kind::norm2, T>(c, per_cta, h, p, i, s);
    case Kind::min: return launch<Kind::min, T>(c, per_cta, h, p, i, s);
    default: return launch<Kind::max, T>(c, per_cta, h, p, i, s);
  }
}

std::atomic<std::size_t> forced_blocks_per_cta{0};

}  // namespace

void set_reduce_blocks_per_cta(std::size_t blocks) { forced_blocks_per_cta.store(blocks); }

std::size_t Reducer::blocks_per_cta(std::size_t n, int sm_count) {
  if (const std::size_t forced = forced_blocks_per_cta.load()) return forced;
  // About 16 CUDA blocks per multiprocessor's worth of work at most, at least a plan
  // block per warp; a power of two so that each CUDA block's run is a node of the tree.
  const std::size_t blocks = plan::block_count(n);
  const std::size_t target = static_cast<std::size_t>(sm_count > 0 ? sm_count : 1) * 16;
  std::size_t per_cta = warps_per_cta;
  while (per_cta < max_blocks_per_cta && (blocks + per_cta - 1) / per_cta > target) per_cta *= 2;
  return per_cta;
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

Reducer::~Reducer() {
  if (workspace_) cudaFree(workspace_);
  if (host_result_) cudaFreeHost(host_result_);
}

ReduceResult Reducer::run(const ReduceCall& c, cudaStream_t stream, int sm_count) {
  const std::size_t per_cta = blocks_per_cta(c.n, sm_count);
  const std::size_t ctas = (plan::block_count(c.n) + per_cta - 1) / per_cta;
  if (ctas > 0x7fffffffu) throw Error(Errc::size_overflow, "cuda reduction: too many elements for one grid");
  const std::size_t partial_bytes = ctas * 3 * sizeof(double), index_bytes = ctas * sizeof(unsigned long long);
  // Workspace sizes are kept when the stream is idle: a larger one is made after a sync.
  if (sizeof(Header) + partial_bytes + index_bytes > workspace_bytes_) {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize before growing the reduction workspace");
    reserve(2 * (sizeof(Header) + partial_bytes + index_bytes), stream);
  }
  if (!host_result_) check(cudaMallocHost(&host_result_, sizeof(Header)), "cudaMallocHost of the reduction result");
  auto* header = static_cast<Header*>(workspace_);
  auto* partials = reinterpret_cast<double*>(static_cast<char*>(workspace_) + sizeof(Header));
  auto* indices = reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(partials) + partial_bytes);
  check(c.dtype == DType::f32 ? launch_kind<float>(c, per_cta, header, partials, indices, stream)
                              : launch_kind<double>(c, per_cta, header, partials, indices, stream),
        "reduction kernel launch");
  if (c.result) return {0.0, 0, true};  // the kernel stores it; nothing to wait for
  check(cudaMemcpyAsync(host_result_, header, sizeof(Header), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync of the reduction result");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after a reduction");
  const auto* result = static_cast<const Header*>(host_result_);
  return {result->value, static_cast<std::uint64_t>(result->index)};
}

}  // namespace ew::detail::cuda
