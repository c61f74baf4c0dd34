#pragma once
// The chunk and run sizes of the cuda expression reductions (expr_reduce.cpp), in plain C++ so that
// tests compiled without CUDA headers use the one declaration.
#include <cstddef>

#include "ew/types.hpp"

namespace ew::detail::cuda {

// Plan blocks per chunk for an output of dtype `out` on a GPU with `l2_bytes` of L2 (0:
// unknown): the largest power of two whose chunk of output takes at most a third of L2 (the
// rest holds the inputs streaming through between the chunk's evaluation and its
// reduction), kept within 2^20..2^22 elements (smaller chunks cost more launches than the
// cache saves). Not measured yet; the bits do not depend on it.
std::size_t default_expr_reduce_chunk_blocks(DType out, std::size_t l2_bytes);

// Tests and benchmarks (not public API): every later call takes chunks (pinned inputs) or
// runs (the fused kernel's, a warp each) of `blocks` plan blocks; 0 restores the defaults. Any power of two gives the same bits (every aligned
// power-of-two run of blocks is a node of the plan's tree). Throws
// ew::Error(invalid_argument) for a value that is not a power of two in 1..2^20.
void set_expr_reduce_chunk_blocks(std::size_t blocks);

}  // namespace ew::detail::cuda
