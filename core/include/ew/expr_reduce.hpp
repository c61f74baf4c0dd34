#pragma once
// Reductions over an expression, in one pass over memory: the sum (or the sum of
// magnitudes) of a compiled kernel's output, without storing the output.
//
//   auto a = ew::input<float>(0), b = ew::input<float>(1);
//   const ew::Kernel sq = ew::compile({(a - b) * (a - b)});
//   double s = ew::sum(ctx, sq, {as, bs});      // sum((a - b)^2)
//
// The value is exactly what evaluating the kernel into an array of its output dtype and
// calling ew::sum (ew::asum) on that array returns: each element's value has the bits the
// kernel would store (rounded to the output's dtype), and the sum is the same fixed tree
// (docs/reductions.md). It comes back as a double holding that result exactly: for f32 and
// 16-bit outputs a float widened, for f64 outputs the double itself.
//
// The kernel has one output. The inputs are checked as Kernel::operator() checks them
// (count, dtypes, one length n for all, null, alignment, memory the backend can read),
// before anything runs; the kernel must read at least one input (n is its length).
// n = 0 gives +0. NaN and infinities as ew::sum.
//
// Backends: all. On cuda the inputs are device, managed or pinned memory (pageable memory is
// refused with Errc::foreign_memory, as ew::sum on cuda refuses it) and the call returns when
// the value is known (one wait per call for device and managed inputs; pinned inputs are
// staged through device memory chunk by chunk, one wait per chunk); a context over several
// devices refuses as ew::sum does. docs/reductions.md says how each backend does it.
#include <cstddef>
#include <initializer_list>

#include "ew/context.hpp"
#include "ew/expr.hpp"

namespace ew {

double sum(Context& ctx, const Kernel& kernel, const InputArray* inputs, std::size_t input_count,
           const double* params, std::size_t param_count);
double asum(Context& ctx, const Kernel& kernel, const InputArray* inputs, std::size_t input_count,
            const double* params, std::size_t param_count);

inline double sum(Context& ctx, const Kernel& kernel, std::initializer_list<InputArray> inputs,
                  std::initializer_list<double> params = {}) {
  return sum(ctx, kernel, inputs.begin(), inputs.size(), params.begin(), params.size());
}
inline double asum(Context& ctx, const Kernel& kernel, std::initializer_list<InputArray> inputs,
                   std::initializer_list<double> params = {}) {
  return asum(ctx, kernel, inputs.begin(), inputs.size(), params.begin(), params.size());
}

}  // namespace ew
