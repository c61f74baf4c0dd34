// Highway's per-target compilation of the reductions: foreach_target.h re-includes this
// file once per target, reduce-inl.h supplies the vector blocks, and HWY_EXPORT builds
// the table that HWY_DYNAMIC_DISPATCH indexes by the target chosen on this CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "reduce-inl.h"

#if HWY_ONCE
#include <atomic>
#include <vector>

#include "backend.hpp"
#include "reduce.hpp"
#include "team.hpp"

namespace ew::detail::highway {

HWY_EXPORT(ReducePartialsF32);
HWY_EXPORT(ReducePartialsF64);
HWY_EXPORT(ExtremumBlocksF32);
HWY_EXPORT(ExtremumBlocksF64);
HWY_EXPORT(ReducePartialsF16);
HWY_EXPORT(ReducePartialsBF16);
HWY_EXPORT(ExtremumBlocksF16);
HWY_EXPORT(ExtremumBlocksBF16);

namespace {

std::atomic<std::size_t>& f64_prefetch_threshold() {
  static std::atomic<std::size_t> bytes{last_level_cache()};
  return bytes;
}
std::atomic<std::size_t> prefetched{0};

// Whether a reduction reading `bytes` of input prefetches its rows (reduce-inl.h: each row's
// lines 2 KiB ahead), where the hardware prefetchers alone leave a core's stream short
// (docs/reductions.md has the A/B runs):
// - 16-bit data, always: one core's stream from DRAM ran at 7 GB/s without, 11 GB/s with;
// - f32 on Intel cores: on the 2-core Xeon CI machine f32 sum and dot read 0.79-0.96x the
//   OpenMP loop at 2^22..2^26 without, 0.95-1.02x with; on the 16-core Xeon host highway's
//   f32 GB/s at 2^25..2^26 rose 12-45 %. Not on AMD cores: on the 2-core EPYC of 2026-11-23
//   the sums and dots ran 10-25 % slower with it at 2^22..2^24 (one core), from DRAM no
//   difference; on the Zen 5 CI machine its f32 GB/s moved -10 to +22 %, no direction;
// - f64 where the inputs are larger than the last-level cache (they stream from DRAM): on the
//   16-core Xeon the f64 sum lost 5-17 % with it at 2^22..2^25, inside its 300 MiB cache, and
//   gained 5 % at 2^26, beyond it; on the Zen 5 CI machine the f64 sum's GB/s from DRAM rose
//   at 12 of 12 points of three series (+0.4 to +18 %, median +7 %), where unchanged f32 code
//   moved -13 to +15 % between the same builds.
template <class T>
bool prefetch_rows(std::size_t bytes) {
  if constexpr (is_storage16_v<T>) {
    return true;
  } else if constexpr (sizeof(T) == 8) {
    return bytes > f64_prefetch_bytes();
  } else {
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
    static const bool intel = __builtin_cpu_is("intel");
    return intel;
#else
    return false;
#endif
  }
}

void partials(plan::Kind kind, const float* x, const float* y, std::size_t n, std::size_t first, std::size_t last,
              double* out, bool prefetch) {
  HWY_DYNAMIC_DISPATCH(ReducePartialsF32)(kind, x, y, n, first, last, out, prefetch);
}
void partials(plan::Kind kind, const double* x, const double* y, std::size_t n, std::size_t first, std::size_t last,
              double* out, bool prefetch) {
  HWY_DYNAMIC_DISPATCH(ReducePartialsF64)(kind, x, y, n, first, last, out, prefetch);
}
void partials(plan::Kind kind, const half* x, const half* y, std::size_t n, std::size_t first, std::size_t last,
              double* out, bool prefetch) {
  HWY_DYNAMIC_DISPATCH(ReducePartialsF16)(kind, x, y, n, first, last, out, prefetch);
}
void partials(plan::Kind kind, const bfloat16* x, const bfloat16* y, std::size_t n, std::size_t first,
              std::size_t last, double* out, bool prefetch) {
  HWY_DYNAMIC_DISPATCH(ReducePartialsBF16)(kind, x, y, n, first, last, out, prefetch);
}
void extrema(bool is_min, const half* x, std::size_t n, std::size_t first, std::size_t last, double* values,
             std::uint64_t* indices) {
  HWY_DYNAMIC_DISPATCH(ExtremumBlocksF16)(is_min, x, n, first, last, values, indices);
}
void extrema(bool is_min, const bfloat16* x, std::size_t n, std::size_t first, std::size_t last, double* values,
             std::uint64_t* indices) {
  HWY_DYNAMIC_DISPATCH(ExtremumBlocksBF16)(is_min, x, n, first, last, values, indices);
}
void extrema(bool is_min, const float* x, std::size_t n, std::size_t first, std::size_t last, double* values,
             std::uint64_t* indices) {
  HWY_DYNAMIC_DISPATCH(ExtremumBlocksF32)(is_min, x, n, first, last, values, indices);
}
void extrema(bool is_min, const double* x, std::size_t n, std::size_t first, std::size_t last, double* values,
             std::uint64_t* indices) {
  HWY_DYNAMIC_DISPATCH(ExtremumBlocksF64)(is_min, x, n, first, last, values, indices);
}

// Runs body(first_block, last_block) over every block once. The team cuts the elements
// into pieces of its own choosing (by thread count and alignment); a piece takes the
// blocks that start inside it, so the blocks themselves never depend on the pieces.
template <class T, class Body>
void for_each_block(int threads, const T* x, std::size_t n, Body&& body) {
  for_each_piece(threads, n, x, sizeof(T), [&](std::size_t begin, std::size_t end) {
    const std::size_t first = plan::block_count(begin), last = plan::block_count(end);
    if (first < last) body(first, last);
  });
}

template <class T>
ReduceResult run_typed(const ReduceCall& c, int threads) {
  const T* x = static_cast<const T*>(c.x);
  const T* y = static_cast<const T*>(c.y);
  const std::size_t n = c.n, blocks = plan::block_count(n);
  if (c.kind == plan::Kind::min || c.kind == plan::Kind::max) {
    const bool is_min = c.kind == plan::Kind::min;
    std::vector<double> values(blocks);
    std::vector<std::uint64_t> indices(blocks);
    for_each_block(threads, x, n, [&](std::size_t first, std::size_t last) {
      extrema(is_min, x, n, first, last, values.data(), indices.data());
    });
    ReduceResult best{values[0], indices[0]};
    for (std::size_t b = 1; b < blocks; ++b)
      if (plan::beats(is_min, values[b], indices[b], best.value, best.index)) best = {values[b], indices[b]};
    return best;
  }
  const bool f64 = sizeof(T) == 8;
  const bool prefetch = prefetch_rows<T>(n * sizeof(T) * (y ? 2 : 1));
  if (prefetch) prefetched.fetch_add(1, std::memory_order_relaxed);
  std::vector<double> out(blocks * static_cast<std::size_t>(plan::width(c.kind, f64)));
  for_each_block(threads, x, n, [&](std::size_t first, std::size_t last) {
    partials(c.kind, x, y, n, first, last, out.data(), prefetch);
  });
  if (c.node) return {plan::pair_tree(out.data(), blocks), 0};
  return {plan::finish_partials(c.kind, f64, out.data(), blocks), 0};
}

}  // namespace

std::size_t f64_prefetch_bytes() { return f64_prefetch_threshold().load(std::memory_order_relaxed); }
void set_f64_prefetch_bytes(std::size_t bytes) { f64_prefetch_threshold().store(bytes, std::memory_order_relaxed); }
std::size_t prefetched_reductions() { return prefetched.load(std::memory_order_relaxed); }

ReduceResult run_reduce(const ReduceCall& call, int threads) {
  switch (call.dtype) {
    case DType::f32: return run_typed<float>(call, threads);
    case DType::f16: return run_typed<half>(call, threads);
    case DType::bf16: return run_typed<bfloat16>(call, threads);
    default: return run_typed<double>(call, threads);
  }
}

}  // namespace ew::detail::highway
#endif  // HWY_ONCE
