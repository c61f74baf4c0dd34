#pragma once
// ew::convert element by element: the definition every backend reproduces bit for bit.
// Widening is exact; narrowing rounds once from the source (ew/float16.hpp for the
// 16-bit types, the hardware's round-to-nearest-even double -> float conversion
// otherwise). The same dtype copies the bits.
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "ew/types.hpp"

namespace ew::detail {

template <class From, class To>
EW_HOST_DEVICE inline To convert_element(From x) {
  if constexpr (std::is_same_v<From, To>) {
    return x;
  } else if constexpr (is_storage16_v<To>) {
    // From float or double: one rounding. From the other 16-bit type: its float value is
    // exact, so rounding that is the one rounding.
    if constexpr (is_storage16_v<From>) return To(static_cast<float>(x));
    else return To(x);
  } else if constexpr (is_storage16_v<From>) {
    return static_cast<To>(static_cast<float>(x));  // exact, then exact float -> double
  } else {
    return static_cast<To>(x);
  }
}

template <class From, class To>
void convert_loop(std::size_t n, const From* in, To* out) {
  if constexpr (std::is_same_v<From, To>) {
    if (in != out) std::memmove(out, in, n * sizeof(To));
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = convert_element<From, To>(in[i]);
  }
}

// Calls f(T{}) with T the element type of `d`.
template <class F>
decltype(auto) dispatch_dtype(DType d, F&& f) {
  switch (d) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::f16: return f(half{});
    case DType::bf16: break;
  }
  return f(bfloat16{});
}

}  // namespace ew::detail
