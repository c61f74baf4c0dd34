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
  if (dtype == DType::f32)
    typed(0.0f);
  else
    typed(0.0);
}

bool supports_everything(Op, DType) { return true; }

}  // namespace

std::vector<Peer> cpu_peers() {
  return {{"openmp loop", false, &supports_everything, &run<true>},
          {"std::transform", false, &supports_everything, &run<false>}};
}

}  // namespace ew::bench
