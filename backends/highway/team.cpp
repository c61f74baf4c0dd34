// The CPU thread team: one contiguous piece of the output per thread, piece bounds on
// cache lines of the output, so no two threads ever write the same line.
#include "team.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace ew::detail::highway {

namespace {

std::atomic<std::size_t> parallel_bytes{default_parallel_threshold_bytes};

constexpr std::size_t cache_line = 64;

// Thread `me` of `team` gets whole cache lines of the output; thread 0 also takes the
// partial line before the first boundary and the last thread the partial line at the end.
struct Piece {
  std::size_t begin, end;
};
Piece piece(std::uintptr_t out, std::size_t element, std::size_t n, int me, int team) {
  const std::size_t per_line = std::max<std::size_t>(1, cache_line / element);
  const std::size_t head = std::min(n, (cache_line - out % cache_line) % cache_line / element);
  const std::size_t lines = (n - head) / per_line;
  const std::size_t share = lines / team, extra = lines % team;
  auto line_start = [&](std::size_t k) { return k * share + std::min(k, extra); };
  const std::size_t k = static_cast<std::size_t>(me);
  Piece p{head + line_start(k) * per_line, head + line_start(k + 1) * per_line};
  if (me == 0) p.begin = 0;
  if (me == team - 1) p.end = n;
  return p;
}

}  // namespace

std::size_t parallel_threshold_bytes() { return parallel_bytes.load(std::memory_order_relaxed); }
void set_parallel_threshold_bytes(std::size_t bytes) { parallel_bytes.store(bytes, std::memory_order_relaxed); }

void for_each_piece_impl(int threads, std::size_t n, const void* out, std::size_t element_bytes,
                         PieceFunction body, void* context) {
  if (n == 0) return;
  if (threads <= 1 || n * element_bytes < parallel_threshold_bytes()) {
    body(context, 0, n);
    return;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(out);
#pragma omp parallel num_threads(threads)
  {
    const Piece p = piece(address, element_bytes, n, omp_get_thread_num(), omp_get_num_threads());
    if (p.end > p.begin) body(context, p.begin, p.end);
  }
}

}  // namespace ew::detail::highway
