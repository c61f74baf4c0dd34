#pragma once
#include "ew_internal/backend_impl.hpp"

namespace ew::detail::scalar {

// The reference evaluation of an expression: element by element, in order.
void run_expr(const ExprCall& call);

}  // namespace ew::detail::scalar
