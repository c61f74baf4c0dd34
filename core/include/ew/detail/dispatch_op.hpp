#pragma once
#include <type_traits>

namespace ew {

template <class F>
decltype(auto) dispatch_op(Op op, F&& f) {
  switch (op) {
    case Op::copy: return f(std::integral_constant<Op, Op::copy>{});
    case Op::scale: return f(std::integral_constant<Op, Op::scale>{});
    case Op::add: return f(std::integral_constant<Op, Op::add>{});
    case Op::mul: return f(std::integral_constant<Op, Op::mul>{});
    case Op::triad: return f(std::integral_constant<Op, Op::triad>{});
    case Op::axpy: return f(std::integral_constant<Op, Op::axpy>{});
    case Op::axpby: break;
  }
  return f(std::integral_constant<Op, Op::axpby>{});
}

}  // namespace ew
