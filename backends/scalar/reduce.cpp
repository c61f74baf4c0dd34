// The reference reductions: every block by reduce_plan.hpp's reference functions, in
// index order, on the calling thread.
#include "reduce.hpp"

#include <algorithm>
#include <vector>

namespace ew::detail::scalar {

namespace {

template <class T>
ReduceResult run_typed(const ReduceCall& c) {
  const T* x = static_cast<const T*>(c.x);
  const T* y = static_cast<const T*>(c.y);
  const std::size_t blocks = plan::block_count(c.n);
  if (c.kind == plan::Kind::min || c.kind == plan::Kind::max) {
    const bool is_min = c.kind == plan::Kind::min;
    ReduceResult best{};
    plan::reference_extremum(is_min, x, c.n, &best.value, &best.index);
    return best;
  }
  const bool f64 = sizeof(T) == 8;
  const int w = plan::width(c.kind, f64);
  std::vector<double> partials(blocks * static_cast<std::size_t>(w));
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * plan::block_elements;
    const std::size_t count = std::min(plan::block_elements, c.n - begin);
    plan::reference_partials<T>(c.kind, x + begin, y ? y + begin : nullptr, count, &partials[b * w]);
  }
  if (c.node) return {plan::pair_tree(partials.data(), blocks), 0};
  return {plan::finish_partials(c.kind, f64, partials.data(), blocks), 0};
}

}  // namespace

ReduceResult run_reduce(const ReduceCall& call) {
  switch (call.dtype) {
    case DType::f32: return run_typed<float>(call);
    case DType::f16: return run_typed<half>(call);
    case DType::bf16: return run_typed<bfloat16>(call);
    default: return run_typed<double>(call);
  }
}

}  // namespace ew::detail::scalar
