#pragma once
// The text of ew/detail/scalar_kit.hpp and ew/detail/math.hpp, compiled into the library
// (embedded_text.cpp.in): the generated CUDA source includes them by pasting, so the
// algorithms of exp, log, tanh, sigmoid, min, max and round exist once.
namespace ew::detail::cuda {

const char* scalar_kit_text();
const char* math_text();

}  // namespace ew::detail::cuda
