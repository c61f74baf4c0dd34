#pragma once
// The CPU thread team shared by everything that runs elementwise work on host cores
// (the Highway kernels, the vectorized expression evaluator). The OpenMP code stays in
// team.cpp; callers see a template that forwards to one non-template entry point.
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace ew::detail::highway {

// The piece body behind for_each_piece: `context` is the caller's callable.
using PieceFunction = void (*)(void* context, std::size_t begin, std::size_t end);

// Non-template core of for_each_piece (team.cpp).
void for_each_piece_impl(int threads, std::size_t n, const void* out, std::size_t element_bytes,
                         PieceFunction body, void* context);

// Runs body(begin, end) over [0, n) in contiguous pieces, on a team of `threads` (the
// calling thread and up to threads - 1 workers), with piece bounds on 64-byte lines of the
// output `out` (elements of `element_bytes`), so no two threads write one line. Returns when
// every piece is done. Runs inline on the calling thread when threads == 1, when
// n * element_bytes is below the parallel threshold, or when the team is busy (a call from
// another application thread, or from inside a body).
// The pieces are claimed dynamically, several per thread (team.cpp says why): a body must
// work on any sub-range, must not rely on which thread runs it, and must not throw.
template <class Body>
void for_each_piece(int threads, std::size_t n, const void* out, std::size_t element_bytes, Body&& body) {
  using Callable = std::remove_reference_t<Body>;
  for_each_piece_impl(
      threads, n, out, element_bytes,
      [](void* context, std::size_t begin, std::size_t end) { (*static_cast<Callable*>(context))(begin, end); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

// How long (microseconds) an idle worker stays awake for the next call: EW_SPIN_US, default
// 200. Throws ew::Error naming EW_SPIN_US if it is malformed (the backend checks it when a
// context is made, so a bad value fails there).
long spin_window_microseconds();

// Output size in bytes below which for_each_piece runs inline (a team costs more than
// it saves there). Tests lower it to reach the threaded path with small arrays.
// Default: the crossover measured on a 2-core EPYC, 2^14 floats (docs/performance/cpu.md).
constexpr std::size_t default_parallel_threshold_bytes = std::size_t(64) << 10;
std::size_t parallel_threshold_bytes();
void set_parallel_threshold_bytes(std::size_t bytes);

// The number of calls the team has run. Tests set it near 2^32, where the call tags that
// the team's claims carry wrap (team.cpp).
void set_team_call_count(std::uint64_t calls);

}  // namespace ew::detail::highway
