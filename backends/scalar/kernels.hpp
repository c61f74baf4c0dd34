#pragma once
#include <cstddef>

#include "ew/ops.hpp"
#include "ew_internal/backend_impl.hpp"

// The library is built for baseline x86-64, where std::fma is a libm call per element
// (a software emulation where the CPU lacks the instruction). A second copy of the loop is
// compiled for CPUs with the FMA instruction and chosen at run time; it computes the same
// bits (fma is exactly rounded everywhere, -ffp-contract=off still applies inside it).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define EW_SCALAR_FMA_CLONE 1
#endif

namespace ew::detail::scalar {

// A plain loop; -ffp-contract=off on the library keeps the compiler from fusing what
// the op table rounds twice.
template <Op op, class T>
void loop(std::size_t n, const T* a, const T* b, T* out, compute_t<T> s, compute_t<T> t) {
  for (std::size_t i = 0; i < n; ++i) out[i] = apply<op>(a[i], b ? b[i] : T(0), s, t);
}

#ifdef EW_SCALAR_FMA_CLONE
// The same loop where fused_multiply_add becomes one vfmadd instruction.
template <Op op, class T>
__attribute__((target("fma"))) void loop_fma(std::size_t n, const T* a, const T* b, T* out, compute_t<T> s,
                                              compute_t<T> t) {
  for (std::size_t i = 0; i < n; ++i) out[i] = apply<op>(a[i], b ? b[i] : T(0), s, t);
}

inline bool cpu_has_fma() {
  static const bool has = __builtin_cpu_supports("fma");
  return has;
}
#endif

template <class T>
void run(const OpCall& c) {
  dispatch_op(c.op, [&](auto op) {
    constexpr Op k = decltype(op)::value;
    const compute_t<T> s = static_cast<compute_t<T>>(c.s), t = static_cast<compute_t<T>>(c.t);
#ifdef EW_SCALAR_FMA_CLONE
    if (cpu_has_fma()) return loop_fma<k, T>(c.n, c.a_as<T>(), c.b_as<T>(), c.out_as<T>(), s, t);
#endif
    loop<k, T>(c.n, c.a_as<T>(), c.b_as<T>(), c.out_as<T>(), s, t);
  });
}

}  // namespace ew::detail::scalar
