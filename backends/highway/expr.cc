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
#include <string>

#include "backend.hpp"
#include "ew/error.hpp"
#include "expr.hpp"

namespace ew::detail::highway {

namespace {
std::atomic<std::size_t> streamed_calls{0};
std::atomic<std::size_t> forced_block{0};
}  // namespace

HWY_EXPORT(RunExpr);

void run_expr(const ExprCall& call, int threads) {
  if (HWY_DYNAMIC_DISPATCH(RunExpr)(call, threads, tuning().streaming_bytes, forced_block.load(std::memory_order_relaxed)))
    streamed_calls.fetch_add(1, std::memory_order_relaxed);
}

void set_expr_block_elements(std::size_t elements) {
  // A multiple of every target's f32 lanes (16 with AVX-512), so that only a piece's
  // head and last partial vector go through padded copies.
  if (elements % 16 != 0 || elements > 65536)
    throw Error(Errc::invalid_argument, "set_expr_block_elements: " + std::to_string(elements) +
                                            " is not 0 or a multiple of 16 up to 65536");
  forced_block.store(elements);
}

std::size_t expr_streaming_calls() { return streamed_calls.load(); }

}  // namespace ew::detail::highway
#endif  // HWY_ONCE
