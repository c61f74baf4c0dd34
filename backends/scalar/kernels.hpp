#pragma once
#include <cstddef>

#include "ew/ops.hpp"
#include "ew_internal/backend_impl.hpp"

namespace ew::detail::scalar {

// A plain loop; -ffp-contract=off on the library keeps the compiler from fusing what
// the op table rounds twice.
template <Op op, class T>
void loop(std::size_t n, const T* a, const T* b, T* out, T s, T t) {
  for (std::size_t i = 0; i < n; ++i) out[i] = apply<op>(a[i], b ? b[i] : T(0), s, t);
}

template <class T>
void run(const OpCall& c) {
  dispatch_op(c.op, [&](auto op) {
    loop<decltype(op)::value, T>(c.n, c.a_as<T>(), c.b_as<T>(), c.out_as<T>(), static_cast<T>(c.s),
                                 static_cast<T>(c.t));
  });
}

}  // namespace ew::detail::scalar
