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
// `input_bytes_per_element` bytes of inputs per element, `in_turn` when its steps read
// the inputs one or two at a time (then each block prefetches the next one's inputs).
// Registers are blocks of doubles and stay within 32 KiB of L1, so that intermediates
// never reach memory. Inputs read in turn want short blocks, so that every stream keeps
// coming back to DRAM: 128 elements gave c = a*b + c*d and a 3-step chain 0.95-1.0x an
// OpenMP loop at n = 2^22..2^24 in f32 and f64, 256 gave 0.81-0.96x, 2048 0.58-0.73x
// (the prefetches of a long block evict the registers). Otherwise a block holds up to
// 4 KiB of inputs, up to 2048 elements: long blocks save a call per instruction.
inline std::size_t expr_block_elements(int registers, std::size_t input_bytes_per_element, bool in_turn) {
  if (in_turn) return 128;
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
