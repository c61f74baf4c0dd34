// Highway's per-target compilation of the expression evaluator: foreach_target.h
// re-includes this file once per target, expr-inl.h supplies the code, and HWY_EXPORT
// builds the table that HWY_DYNAMIC_DISPATCH indexes by the target chosen on this CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "expr.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "expr-inl.h"

#if HWY_ONCE
#include <atomic>

#include "backend.hpp"
#include "expr.hpp"

namespace ew::detail::highway {

namespace {
std::atomic<std::size_t> streamed_calls{0};
}

HWY_EXPORT(RunExpr);

void run_expr(const ExprCall& call, int threads) {
  if (HWY_DYNAMIC_DISPATCH(RunExpr)(call, threads, tuning().streaming_bytes))
    streamed_calls.fetch_add(1, std::memory_order_relaxed);
}

std::size_t expr_streaming_calls() { return streamed_calls.load(); }

}  // namespace ew::detail::highway
#endif  // HWY_ONCE
