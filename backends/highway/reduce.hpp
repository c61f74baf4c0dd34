#pragma once
// The plain interface of the Highway reductions (reduce.cc): no Highway header here.
#include "ew_internal/backend_impl.hpp"

namespace ew::detail::highway {

// The reduction on `threads` threads of the CPU team: blocks spread over the threads in
// any way, their partials combined by the plan's tree on the calling thread.
ReduceResult run_reduce(const ReduceCall& call, int threads);

}  // namespace ew::detail::highway
