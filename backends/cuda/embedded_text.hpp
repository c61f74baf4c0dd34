#pragma once
// The text of ew/detail/scalar_kit.hpp, ew/detail/math.hpp and ew/detail/float16_bits.hpp,
// compiled into the library (embedded_text.cpp.in): the generated CUDA source includes
// them by pasting, so the algorithms of exp, log, tanh, sigmoid, min, max and round and
// the 16-bit conversions exist once.
namespace ew::detail::cuda {

const char* scalar_kit_text();
const char* math_text();
const char* float16_bits_text();

}  // namespace ew::detail::cuda
