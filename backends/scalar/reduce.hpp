#pragma once
#include "ew_internal/backend_impl.hpp"

namespace ew::detail::scalar {

// The reductions exactly as reduce_plan.hpp writes them, one element at a time.
ReduceResult run_reduce(const ReduceCall& call);

}  // namespace ew::detail::scalar
