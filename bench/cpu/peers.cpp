// CPU peers: a plain OpenMP loop and std::transform, each computing the op table's
// formula through ew::apply (so results, and the fused multiply-adds, are the same
// as the library's). For in-place ops b == out.
#include <algorithm>
#include <cstddef>

#include "ew/ops.hpp"
#include "peers.hpp"

namespace ew::bench {

namespace {

template <Op op, class T>
void openmp_loop(std::size_t n, const T* a, const T* b, T* out, T s, T t) {
  constexpr bool reads_b = info(op).reads_b();
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = apply<op>(a[i], reads_b ? b[i] : T(0), s, t);
}

// 16-bit data as a user would write it: widen to float, the float formula, round back.
// f16 through the compiler's _Float16 (F16C instructions under -march=native); bf16,
// which GCC 12 has no arithmetic type for, through the library's storage type.
template <Op op, class T, class Storage>
void openmp_loop16(std::size_t n, const Storage* a, const Storage* b, Storage* out, float s, float t) {
  constexpr bool reads_b = info(op).reads_b();
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
  const T* ta = reinterpret_cast<const T*>(a);
  const T* tb = reinterpret_cast<const T*>(b);
  T* tout = reinterpret_cast<T*>(out);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i)
    tout[i] = static_cast<T>(apply<op>(static_cast<float>(ta[i]), reads_b ? static_cast<float>(tb[i]) : 0.0f, s, t));
}

template <Op op, class T>
void transform(std::size_t n, const T* a, const T* b, T* out, T s, T t) {
  if constexpr (info(op).reads_b())
    std::transform(a, a + n, b, out, [s, t](T x, T y) { return apply<op>(x, y, s, t); });
  else
    std::transform(a, a + n, out, [s, t](T x) { return apply<op>(x, T(0), s, t); });
}

// Turns the peer interface's run-time op and dtype into a compile-time loop.
template <bool parallel>
void run(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t, void*) {
  auto typed = [&](auto zero) {
    using T = decltype(zero);
    dispatch_op(op, [&](auto o) {
      constexpr Op k = decltype(o)::value;
      const T* ta = static_cast<const T*>(a);
      const T* tb = static_cast<const T*>(b);
      T* tout = static_cast<T*>(out);
      if constexpr (parallel)
        openmp_loop<k, T>(n, ta, tb, tout, static_cast<T>(s), static_cast<T>(t));
      else
        transform<k, T>(n, ta, tb, tout, static_cast<T>(s), static_cast<T>(t));
    });
  };
  auto typed16 = [&](auto storage, auto arithmetic) {
    using S = decltype(storage);
    using T = decltype(arithmetic);
    dispatch_op(op, [&](auto o) {
      constexpr Op k = decltype(o)::value;
      const S* ta = static_cast<const S*>(a);
      const S* tb = static_cast<const S*>(b);
      S* tout = static_cast<S*>(out);
      if constexpr (parallel) {
        openmp_loop16<k, T>(n, ta, tb, tout, static_cast<float>(s), static_cast<float>(t));
      } else {
        const float fs = static_cast<float>(s), ft = static_cast<float>(t);
        if constexpr (info(k).reads_b())
          std::transform(ta, ta + n, tb, tout, [fs, ft](S x, S y) { return apply<k>(x, y, fs, ft); });
        else
          std::transform(ta, ta + n, tout, [fs, ft](S x) { return apply<k>(x, S{}, fs, ft); });
      }
    });
  };
  switch (dtype) {
    case DType::f32: return typed(0.0f);
    case DType::f64: return typed(0.0);
#if defined(__FLT16_MAX__)
    case DType::f16: return typed16(half{}, _Float16{});
#else
    case DType::f16: return typed16(half{}, half{});
#endif
    case DType::bf16: return typed16(bfloat16{}, bfloat16{});
  }
}

bool supports_everything(Op, DType) { return true; }

}  // namespace

std::vector<Peer> cpu_peers() {
  return {{"openmp loop", false, &supports_everything, &run<true>},
          {"std::transform", false, &supports_everything, &run<false>}};
}

}  // namespace ew::bench
