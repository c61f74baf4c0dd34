#pragma once
// Reductions on any Kokkos execution space: one parallel_for over the plan's blocks
// (ew_internal/reduce_plan.hpp), each block by the plan's reference code, its partials
// into a view; then the partials, copied to the host, combined by the plan's tree. The
// bits are the scalar backend's by construction. One thread per block is the simplest
// shape that is exact on every space; on a GPU it reads memory with a stride between
// threads, far from the cuda backend's speed.
#include <Kokkos_Core.hpp>

#include <cstdint>

#include "ew_internal/backend_impl.hpp"

namespace ew::detail::kokkos {

template <class T, class Exec>
ReduceResult run_reduce_typed(const Exec& exec, const ReduceCall& c) {
  using Space = typename Exec::memory_space;
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  const T* x = static_cast<const T*>(c.x);
  const T* y = static_cast<const T*>(c.y);
  const std::size_t n = c.n;
  const std::int64_t blocks = static_cast<std::int64_t>(plan::block_count(n));
  if (c.kind == plan::Kind::min || c.kind == plan::Kind::max) {
    const bool is_min = c.kind == plan::Kind::min;
    Kokkos::View<double*, Space> values("ew::reduce values", blocks);
    Kokkos::View<std::uint64_t*, Space> indices("ew::reduce indices", blocks);
    Kokkos::parallel_for(
        "ew::reduce extrema", Policy(exec, 0, blocks), KOKKOS_LAMBDA(std::int64_t b) {
          const std::size_t begin = static_cast<std::size_t>(b) * plan::block_elements;
          const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
          std::uint64_t at = 0;
          plan::reference_extremum(is_min, x + begin, count, &values(b), &at);
          indices(b) = at + begin;
        });
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
    auto k = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), indices);
    ReduceResult best{v(0), k(0)};
    for (std::int64_t b = 1; b < blocks; ++b)
      if (plan::beats(is_min, v(b), k(b), best.value, best.index)) best = {v(b), k(b)};
    return best;
  }
  const bool f64 = sizeof(T) == 8;
  const int w = plan::width(c.kind, f64);
  const plan::Kind kind = c.kind;
  Kokkos::View<double*, Space> partials("ew::reduce partials", blocks * w);
  Kokkos::parallel_for(
      "ew::reduce partials", Policy(exec, 0, blocks), KOKKOS_LAMBDA(std::int64_t b) {
        const std::size_t begin = static_cast<std::size_t>(b) * plan::block_elements;
        const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
        plan::reference_partials<T>(kind, x + begin, y ? y + begin : nullptr, count, &partials(b * w));
      });
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), partials);
  if (c.node) return {plan::pair_tree(host.data(), static_cast<std::size_t>(blocks)), 0};
  return {plan::finish_partials(kind, f64, host.data(), static_cast<std::size_t>(blocks)), 0};
}

template <class Exec>
ReduceResult run_reduce(const Exec& exec, const ReduceCall& c) {
  switch (c.dtype) {
    case DType::f32: return run_reduce_typed<float>(exec, c);
    case DType::f16: return run_reduce_typed<half>(exec, c);
    case DType::bf16: return run_reduce_typed<bfloat16>(exec, c);
    default: return run_reduce_typed<double>(exec, c);
  }
}

}  // namespace ew::detail::kokkos
