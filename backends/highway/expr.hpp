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

// Elements per block for a program of `registers` block registers reading
// `input_bytes_per_element` bytes of inputs per element: a power of two from 256 to 2048.
// Its registers (blocks of doubles) stay within 32 KiB of L1, so that intermediates never
// reach memory. Each step reads one or two of the inputs, so a block reads them one after
// another: past 4 KiB of inputs per block, streams from DRAM idle too long between turns
// (c = a*b + c*d ran at 0.87x an OpenMP loop with 2048 elements, 0.92x with 256), while
// short blocks cost a call per instruction and output each.
inline std::size_t expr_block_elements(int registers, std::size_t input_bytes_per_element) {
  std::size_t block = 2048;
  while (block > 256 && (static_cast<std::size_t>(registers) * block * sizeof(double) > (std::size_t(32) << 10) ||
                         input_bytes_per_element * block > (std::size_t(4) << 10)))
    block /= 2;
  return block;
}

// Forces the block size of every call (tests reach block edges with small arrays,
// benchmarks compare sizes); 0 restores expr_block_elements(). Throws ew::Error unless
// 0 or a multiple of 16 from 16 to 65536.
void set_expr_block_elements(std::size_t elements);

}  // namespace ew::detail::highway
