#pragma once
// The plain interface of the Highway expression evaluator (expr.cc, expr-inl.h): no
// Highway header here, so backend.cpp and the tests stay free of HWY_* machinery.
#include <cstddef>

namespace ew::detail {
struct ExprCall;
}

namespace ew::detail::highway {

// Evaluates a validated expression call on `threads` threads (the CPU team), on the best
// target of this CPU (or the one a test forced), with the bits of the scalar reference
// (ew_internal/element_eval.hpp). Outputs are written with non-temporal stores when all
// outputs together exceed tuning().streaming_bytes, except an output that is also an input.
void run_expr(const ExprCall& call, int threads);

// How many expression calls streamed an output so far (lets a test assert it ran).
std::size_t expr_streaming_calls();

// Elements per block: every register of the program holds one block, so that a block's
// intermediates stay in L1 (a register of doubles is 2 KiB).
inline constexpr std::size_t expr_block_elements = 256;

}  // namespace ew::detail::highway
