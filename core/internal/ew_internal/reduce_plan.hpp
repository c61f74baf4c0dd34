#pragma once
// The one summation tree of every reduction (ew/reduce.hpp), written once here and
// reproduced by every backend, so that the bits depend on the data alone (not on the
// backend, thread count, GPU, grid or alignment). docs/reductions.md gives the reasons
// and the error bound.
//
//   terms   t_i = term(x_i, y_i), exact or rounded once, in double (accumulator type
//           for f32 and f64 data alike; see term_* below);
//   blocks  the index space cut into blocks of block_elements elements (the last one may
//           be short), fixed by the index alone;
//   lanes   inside a block, lane j (0 <= j < lanes) sums the block's elements j, j + lanes,
//           j + 2 lanes, ... in that order, starting from +0.0, one rounded add each;
//   tree    the lanes of a block, and then the blocks' partials, are combined by the
//           canonical pairwise tree (pair_tree below).
//
// The canonical pairwise tree of v[0..m): node (0, i) = v[i]; node (k, i) covers the
// aligned range [i 2^k, (i+1) 2^k) cut at m and is node (k-1, 2i) + node (k-1, 2i+1),
// or node (k-1, 2i) alone when the right child covers nothing. The root is the
// node covering [0, m). Every aligned power-of-two range of partials is a node, so any
// worker that owns such a range may reduce it alone and hand its node on: the
// assignment of blocks to threads, CUDA blocks or pieces never changes the bits.
//
// This header is plain C++ that nvcc also compiles for the device: no CUDA, Kokkos or
// Highway header, and every rounded operation goes through add()/mul() so that CUDA
// code cannot contract them into fma (they are __dadd_rn/__dmul_rn there).
#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define EW_PLAN_FN __host__ __device__ inline
#else
#define EW_PLAN_FN inline
#endif

namespace ew::detail::plan {

constexpr std::size_t block_elements = 2048;
constexpr int lanes = 32;
static_assert(block_elements % lanes == 0, "a full block gives every lane the same count");

constexpr std::size_t block_count(std::size_t n) { return n / block_elements + (n % block_elements != 0); }

EW_PLAN_FN double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
EW_PLAN_FN double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
EW_PLAN_FN double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
EW_PLAN_FN double root(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
EW_PLAN_FN double magnitude(double a) {
#if defined(__CUDA_ARCH__)
  return fabs(a);
#else
  return std::fabs(a);
#endif
}
EW_PLAN_FN bool is_nan(double a) { return a != a; }

// Which reduction; also the ReduceCall's op.
enum class Kind { sum, asum, dot, norm2, min, max };

// Accumulators per lane and per partial: 3 for the scaled f64 2-norm (small, medium and
// big magnitudes, Blue's algorithm as LAPACK's dnrm2), 1 otherwise. min/max keep no sums.
EW_PLAN_FN constexpr int width(Kind kind, bool f64) { return kind == Kind::norm2 && f64 ? 3 : 1; }

// Blue's thresholds and scales for double (LAPACK la_constants): squares of |x| in
// [tsml, tbig] neither overflow nor lose bits to underflow; larger ones are scaled down
// by sbig, smaller ones up by ssml, before squaring. Powers of two: scaling is exact.
constexpr double tsml = 0x1p-511, tbig = 0x1p+486, ssml = 0x1p+537, sbig = 0x1p-538;

// The terms. f32 data are widened to double first: a product or square of two floats
// is then exact (48 significant bits), so f32 terms are exact. 16-bit data (f16, bf16)
// are widened exactly too and take the f32 path everywhere (their squares neither
// overflow nor underflow in double: no scaling). f64 products and squares
// round once (multiply, then add: no fma anywhere, on every backend).
EW_PLAN_FN double term_sum(double x) { return x; }
EW_PLAN_FN double term_asum(double x) { return magnitude(x); }
EW_PLAN_FN double term_dot(double x, double y) { return mul(x, y); }
EW_PLAN_FN double term_square(double x) { return mul(x, x); }
// The scaled 2-norm of f64 data: the accumulator (0 small, 1 medium, 2 big) a value goes
// to, and its scaled square. NaN goes to the medium one (it compares false both ways).
EW_PLAN_FN int norm2_class(double x) {
  const double a = magnitude(x);
  return a > tbig ? 2 : a < tsml ? 0 : 1;
}
EW_PLAN_FN double norm2_term(double x, int cls) {
  const double s = cls == 2 ? mul(x, sbig) : cls == 0 ? mul(x, ssml) : x;
  return mul(s, s);
}

// The canonical pairwise tree of v[0], v[stride], ..., v[(m-1) stride], computed in one
// pass with a binary counter: complete nodes wait on a stack (sizes strictly decreasing
// from the bottom), two equal ones merge, and the stack is folded from the top at the
// end, which is exactly the tree above for any m (a cut range's root is its complete
// left half plus the canonical tree of the rest). m = 0 gives +0. get(i) reads v[i].
template <class Get>
EW_PLAN_FN double pair_tree_of(std::size_t m, Get get) {
  double stack[66];
  int depth = 0;
  for (std::size_t i = 0; i < m; ++i) {
    double node = get(i);
    // Merges: one per trailing 1 bit of i (the complete nodes this element closes).
    for (std::size_t k = i; k & 1; k >>= 1) node = add(stack[--depth], node);
    stack[depth++] = node;
  }
  if (depth == 0) return 0.0;
  double r = stack[--depth];
  while (depth > 0) r = add(stack[--depth], r);
  return r;
}
EW_PLAN_FN double pair_tree(const double* v, std::size_t m, std::size_t stride = 1) {
  return pair_tree_of(m, [=](std::size_t i) { return v[i * stride]; });
}

// The reference block: lanes then the lane tree, for `count` (<= block_elements) terms
// term(i), accumulator c of `w`. Backends that vectorize or spread the lanes over
// threads must give the same bits; the scalar backend and kokkos use it as is.
template <class Term>
EW_PLAN_FN double reference_block(std::size_t count, Term term) {
  double lane[lanes];
  for (int j = 0; j < lanes; ++j) lane[j] = 0.0;
  for (std::size_t i = 0; i < count; ++i) lane[i % lanes] = add(lane[i % lanes], term(i));
  return pair_tree(lane, lanes);
}

// min/max: the winner of two candidates (value as double, index). NaN beats every
// number (the first NaN wins), otherwise the smaller (min) or larger (max) value, and
// between equal values (+0 and -0 are equal) the lower index. That is a total order on
// (value, index) pairs, so every grouping gives the same winner.
EW_PLAN_FN bool beats(bool is_min, double a, std::uint64_t ia, double b, std::uint64_t ib) {
  const bool na = is_nan(a), nb = is_nan(b);
  if (na || nb) return na && (!nb || ia < ib);
  if (a != b) return is_min ? a < b : a > b;
  return ia < ib;
}

// Block b's partials (width(kind) of them) of x[0..count), y[0..count), for every
// kind but min/max, by reference_block.
template <class T>
EW_PLAN_FN void reference_partials(Kind kind, const T* x, const T* y, std::size_t count, double* out) {
  const auto d = [](T v) { return static_cast<double>(v); };
  switch (kind) {
    case Kind::sum: out[0] = reference_block(count, [&](std::size_t i) { return term_sum(d(x[i])); }); break;
    case Kind::asum: out[0] = reference_block(count, [&](std::size_t i) { return term_asum(d(x[i])); }); break;
    case Kind::dot: out[0] = reference_block(count, [&](std::size_t i) { return term_dot(d(x[i]), d(y[i])); }); break;
    default:
      if (sizeof(T) != 8) {
        out[0] = reference_block(count, [&](std::size_t i) { return term_square(d(x[i])); });
      } else {
        for (int c = 0; c < 3; ++c)
          out[c] = reference_block(count, [&](std::size_t i) {
            const double v = d(x[i]);
            return norm2_class(v) == c ? norm2_term(v, c) : 0.0;
          });
      }
  }
}

// The min/max winner of x[0..count) (index relative to x).
template <class T>
EW_PLAN_FN void reference_extremum(bool is_min, const T* x, std::size_t count, double* value, std::uint64_t* index) {
  double best = static_cast<double>(x[0]);
  std::uint64_t at = 0;
  for (std::size_t i = 1; i < count; ++i)
    if (beats(is_min, static_cast<double>(x[i]), i, best, at)) best = static_cast<double>(x[i]), at = i;
  *value = best;
  *index = at;
}

// The value of the 2-norm of f64 data from the roots of its three accumulators (LAPACK
// dnrm2, Anderson's 2017 version of Blue's algorithm).
EW_PLAN_FN double finish_norm2_f64(double small, double medium, double big) {
  double scale = 1.0, sumsq = medium;
  if (big > 0.0) {
    if (medium > 0.0 || is_nan(medium)) big = add(big, mul(mul(medium, sbig), sbig));
    scale = 1.0 / sbig;
    sumsq = big;
  } else if (small > 0.0) {
    if (medium > 0.0 || is_nan(medium)) {
      const double m = root(medium), s = div(root(small), ssml);
      const double lo = s > m ? m : s, hi = s > m ? s : m;
      const double q = div(lo, hi);
      sumsq = mul(mul(hi, hi), add(1.0, mul(q, q)));
    } else {
      scale = 1.0 / ssml;
      sumsq = small;
    }
  }
  return mul(scale, root(sumsq));
}

// The final value of a sum-like reduction from its root accumulators, rounded to the
// result's type (f32 and 16-bit data: one rounding of the double result to float) and
// returned as a double. NaN
// results are the type's default quiet NaN on every backend (GPUs do not propagate
// payloads as CPUs do).
EW_PLAN_FN double finish(Kind kind, bool f64, const double* acc) {
  double v = acc[0];
  if (kind == Kind::norm2) v = f64 ? finish_norm2_f64(acc[0], acc[1], acc[2]) : root(acc[0]);
  if (is_nan(v)) return f64 ? static_cast<double>(NAN) : static_cast<double>(static_cast<float>(NAN));
  return f64 ? v : static_cast<double>(static_cast<float>(v));
}

// The result from the blocks' partials (block b's accumulator c at partials[b w + c]).
EW_PLAN_FN double finish_partials(Kind kind, bool f64, const double* partials, std::size_t blocks) {
  const int w = width(kind, f64);
  double acc[3] = {0.0, 0.0, 0.0};
  for (int c = 0; c < w; ++c) acc[c] = pair_tree(partials + c, blocks, static_cast<std::size_t>(w));
  return finish(kind, f64, acc);
}

}  // namespace ew::detail::plan
