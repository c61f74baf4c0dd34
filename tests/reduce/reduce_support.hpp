#pragma once
// Shared by the reduction tests: one call of any reduction through the public API, its
// result as bits, data with cancellation, and an exact (double-double) reference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace ew::test {

enum class Red { sum, asum, dot, norm2, min, max };
inline constexpr Red all_reds[] = {Red::sum, Red::asum, Red::dot, Red::norm2, Red::min, Red::max};
inline const char* name(Red r) {
  static const char* const names[] = {"sum", "asum", "dot", "norm2", "min_element", "max_element"};
  return names[static_cast<int>(r)];
}

// The elements of the block plan (docs/reductions.md), repeated here on purpose: a test
// that used the library's constants could not see them change.
inline constexpr std::size_t B = 2048;
inline constexpr std::size_t L = 32;

// What a test keeps of a result: the value as returned for f32 and f64 data; for 16-bit
// data (a float sum, a 16-bit extremum) widened exactly to double, so equal bits stay equal.
template <class T>
using got_t = std::conditional_t<is_storage16_v<T>, double, T>;

template <class T>
struct Got {
  got_t<T> value;
  std::size_t index;  // 0 for the sums
  bool operator==(const Got& o) const { return same_bits(value, o.value) && index == o.index; }
};

template <class T>
std::uint64_t bits(T v) {
  if constexpr (sizeof(T) == 4) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  } else {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
}

template <class T>
std::string show(const Got<T>& g) {
  char text[96];
  std::snprintf(text, sizeof text, "%.17g (bits %llx) @%zu", static_cast<double>(g.value),
                static_cast<unsigned long long>(bits<got_t<T>>(g.value)), g.index);
  return text;
}

template <class T>
Got<T> reduce(Context& ctx, Red r, Span<const T> x, Span<const T> y) {
  switch (r) {
    case Red::sum: return {static_cast<got_t<T>>(ew::sum<T>(ctx, x)), 0};
    case Red::asum: return {static_cast<got_t<T>>(ew::asum<T>(ctx, x)), 0};
    case Red::dot: return {static_cast<got_t<T>>(ew::dot<T>(ctx, x, y)), 0};
    case Red::norm2: return {static_cast<got_t<T>>(ew::norm2<T>(ctx, x)), 0};
    case Red::min: {
      const Extremum<T> e = ew::min_element<T>(ctx, x);
      return {static_cast<got_t<T>>(e.value), e.index};
    }
    default: {
      const Extremum<T> e = ew::max_element<T>(ctx, x);
      return {static_cast<got_t<T>>(e.value), e.index};
    }
  }
}

// Host arrays, or the backend's own memory when it cannot read host memory (cuda).
template <class T>
struct Operand {
  std::vector<T> host;
  std::unique_ptr<Buffer<T>> device;
  Span<const T> span(Context& ctx, std::size_t off, std::size_t n) {
    if (ctx.device() < 0) return Span<const T>(host.data() + off, n);  // a context on the host
    if (!device) {
      device = std::make_unique<Buffer<T>>(ctx, host.size());
      device->upload(host.data(), host.size());
    }
    return Span<const T>(device->data() + off, n, device->space());
  }
  void changed() { device.reset(); }  // after host was edited
};

// Pairs that nearly cancel (a, -a(1 + small)) among values over 17 binades, shuffled:
// the sum is far smaller than the sum of magnitudes, so rounding shows. 16-bit data: the
// float pairs rounded to the type.
template <class T>
std::vector<T> cancelling_vector(std::size_t n) {
  if constexpr (is_storage16_v<T>) {
    const std::vector<float> f = cancelling_vector<float>(n);
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = T(f[i]);
    return v;
  } else {
    std::vector<T> v = random_vector<T>(n);
    std::uniform_real_distribution<T> tiny(T(-1e-3), T(1e-3));
    for (std::size_t i = 1; i < n; i += 2) v[i] = -v[i - 1] * (T(1) + tiny(rng()));
    std::shuffle(v.begin(), v.end(), rng());
    return v;
  }
}

// A negative signaling NaN with payload 5: the quiet bit clear, so that its trip through
// each backend shows.
template <class T>
T signaling_nan() {
  T v;
  if constexpr (sizeof(T) == 4) {
    const std::uint32_t b = 0xffa00005u;
    std::memcpy(&v, &b, 4);
  } else {
    const std::uint64_t b = 0xfff4000000000005ull;
    std::memcpy(&v, &b, 8);
  }
  return v;
}

// x and y of n random elements (n > special_size) with special values in x, by pattern
// (0..special_patterns - 1): NaN in two plan blocks (the first signaling, with a sign and a
// payload); infinities of both signs; one
// infinity; zeros of both signs only; the largest and smallest values (f64: 1e300,
// 1e-310, the 2-norm's big and small classes; f32 takes them rounded: infinities and
// zero); an infinity, a NaN and the opposite infinity at both ends; float's subnormals,
// smallest normals and largest finite values of both signs in every lane of a block (in f64
// these are ordinary numbers).
inline constexpr std::size_t special_size = 5 * B + 77;
inline constexpr int special_patterns = 7;
template <class T>
std::pair<std::vector<T>, std::vector<T>> special_vectors(std::size_t n, int pattern) {
  if (n <= special_size) throw std::invalid_argument("special_vectors: n must exceed special_size");
  std::vector<T> x = random_vector<T>(n), y = random_vector<T>(n);
  const auto put = [&](std::size_t i, double v) { x[i] = static_cast<T>(v); };
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t last = special_size - 1;
  switch (pattern) {
    case 0: put(3 * B + 5, nan), x[B + 2] = signaling_nan<T>(); break;
    case 1: put(4 * B, inf), put(77, -inf); break;
    case 2: put(2 * B - 1, inf); break;
    case 3:
      for (std::size_t i = 0; i < n; ++i) put(i, (i % 3) ? 0.0 : -0.0);
      break;
    case 4: put(B, 1e300), put(2 * B, -1e300), put(5, 1e-310), put(6, 3e38), put(7, -3e38); break;
    case 5: {
      const float edges[] = {std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                             1e-40f, -3e-39f, std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(),
                             std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
      for (std::size_t i = B; i < 2 * B; ++i) put(i, edges[i / 32 % 8] * (i % 2 ? 1.0 : 0.5));
      break;
    }
    default: put(last, -inf), put(last - 1, nan), put(0, inf); break;
  }
  return {std::move(x), std::move(y)};
}

// The forms that store the value into a span (asynchronous on cuda): the returned value's
// bits (reduce_result_t: a float for 16-bit data), in the context's own memory and, on a GPU,
// managed memory (and pinned memory on cuda), the slot poisoned first; n = 0 stores 0.
template <class T>
void stores_into_result(Context& ctx, std::size_t n) {
  using R = reduce_result_t<T>;
  Operand<T> x{cancelling_vector<T>(n + 1), nullptr}, y{random_vector<T>(n + 1), nullptr};
  const Span<const T> xs = x.span(ctx, 1, n), ys = y.span(ctx, 1, n);
  std::vector<MemorySpace> spaces{MemorySpace::unknown};
  if (ctx.device() >= 0) spaces.push_back(MemorySpace::managed);
  if (ctx.backend() == Backend::cuda) spaces.push_back(MemorySpace::pinned);
  for (MemorySpace space : spaces) {
    Buffer<R> slot(ctx, 1, space);
    for (Red r : {Red::sum, Red::asum, Red::dot, Red::norm2}) {
      const R poisoned = poison<R>();
      slot.upload(&poisoned, 1);
      const got_t<T> want = reduce<T>(ctx, r, xs, ys).value;
      const Span<R> out(slot.data(), 1, slot.space());
      switch (r) {
        case Red::sum: ew::sum<T>(ctx, xs, out); break;
        case Red::asum: ew::asum<T>(ctx, xs, out); break;
        case Red::dot: ew::dot<T>(ctx, xs, ys, out); break;
        default: ew::norm2<T>(ctx, xs, out);
      }
      ctx.synchronize();
      R got;
      slot.download(&got, 1);
      EXPECT_TRUE(same_bits(static_cast<got_t<T>>(got), want) && !is_poison(got))
          << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << " in " << to_string(slot.space())
          << " memory: stored " << got << ", returned " << want;
    }
  }
}

// Double-double accumulation: error about n 2^-106 of the sum of magnitudes, far below
// the bounds tested.
struct DoubleDouble {
  double hi = 0, lo = 0;
  void add(double x) {
    const double s = hi + x, bp = s - hi, e = (hi - (s - bp)) + (x - bp);
    hi = s;
    lo += e;
    const double t = hi + lo;
    lo = lo - (t - hi);
    hi = t;
  }
  // x * y exactly as two doubles, added.
  void add_product(double x, double y) {
    const double p = x * y;
    add(p);
    add(std::fma(x, y, -p));
  }
  double value() const { return hi + lo; }
};

}  // namespace ew::test
