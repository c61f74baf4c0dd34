// Argument checking for the reductions, done once here as for the ops (run.cpp), before
// a backend sees the call.
#include "ew/reduce.hpp"

#include <limits>
#include <string>

#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/check.hpp"

namespace ew {

namespace detail {

ReduceResult BackendImpl::run_reduce(const ReduceCall&) {
  throw Error(Errc::backend_unavailable, "this backend has no reductions");
}

namespace {

constexpr const char* call_name(plan::Kind kind) {
  switch (kind) {
    case plan::Kind::sum: return "ew::sum";
    case plan::Kind::asum: return "ew::asum";
    case plan::Kind::dot: return "ew::dot";
    case plan::Kind::norm2: return "ew::norm2";
    case plan::Kind::min: return "ew::min_element";
    default: return "ew::max_element";
  }
}

// result: one reduce_result_t<T> (float for 16-bit data).
template <class T>
ReduceResult reduce(Context& ctx, plan::Kind kind, Span<const T> x, const Span<const T>* y,
                    const Span<reduce_result_t<T>>* result = nullptr) {
  using R = reduce_result_t<T>;
  const char* call = call_name(kind);
  BackendImpl& backend = checked_backend(ctx, call);
  const std::size_t n = x.size;
  if (y) check_size(call, "y", y->size, "x", n);
  if (result) check_size(call, "result", result->size, "one value", 1);
  check_dtype(ctx, backend, call, dtype_v<T>);
  refuse_reduction_on_several_devices(ctx, backend, call, kind, dtype_v<T>);
  ByteRange out{};
  MemorySpace out_space = MemorySpace::unknown;
  if (result) {
    out = check_operand(call, "result", result->data, 1, sizeof(R));
    out_space = check_memory_space(ctx, call, "result", result->data, result->space, result->device);
    if (!backend.stores_results_in(out_space))
      throw Error(Errc::foreign_memory, std::string(call) + ": result is " + to_string(out_space) +
                                            " memory, which the " + ctx.backend_name() +
                                            " backend does not store a reduction's result in");
  }
  if (n == 0) {
    ReduceResult identity{0.0, 0};
    if (kind == plan::Kind::min) identity = {std::numeric_limits<double>::infinity(), no_index};
    if (kind == plan::Kind::max) identity = {-std::numeric_limits<double>::infinity(), no_index};
    if (result) backend.zero_bytes(result->data, sizeof(R));  // the forms with a result: the sums, 0
    return identity;
  }
  const ByteRange xr = check_operand(call, "x", x.data, n, sizeof(T));
  // A result may be x[0] or y[0] (every backend reads all of x and y before it stores),
  // nothing else of them.
  if (result && !(out.begin == xr.begin)) check_overlap(call, "x", xr, "result", out);
  if (y) {
    const ByteRange yr = check_operand(call, "y", y->data, n, sizeof(T));
    if (result && !(out.begin == yr.begin)) check_overlap(call, "y", yr, "result", out);
  }

  ReduceCall c{};
  c.call = call;
  c.kind = kind;
  c.dtype = dtype_v<T>;
  c.n = n;
  c.x = x.data;
  c.x_space = check_memory_space(ctx, call, "x", x.data, x.space, x.device);
  if (y) {
    c.y = y->data;
    c.y_space = check_memory_space(ctx, call, "y", y->data, y->space, y->device);
  }
  if (result) {
    c.result = result->data;
    c.result_space = out_space;
  }
  try {
    const ReduceResult r = backend.run_reduce(c);
    if (result && !r.stored) {
      const R value = static_cast<R>(r.value);
      backend.copy_bytes(result->data, &value, sizeof(R));
    }
    return r;
  } catch (const Error& e) {
    if (e.code() != Errc::backend_unavailable) throw;
    throw Error(e.code(), std::string(call) + " on the " + ctx.backend_name() + " backend: " + e.what());
  }
}

template <class T>
Extremum<T> extremum(Context& ctx, plan::Kind kind, Span<const T> x) {
  const ReduceResult r = reduce<T>(ctx, kind, x, nullptr);
  return {static_cast<T>(r.value), static_cast<std::size_t>(r.index)};
}

}  // namespace

}  // namespace detail

template <class T>
reduce_result_t<T> sum(Context& ctx, Span<const detail::nd<T>> x) {
  return static_cast<reduce_result_t<T>>(detail::reduce<T>(ctx, detail::plan::Kind::sum, x, nullptr).value);
}
template <class T>
reduce_result_t<T> asum(Context& ctx, Span<const detail::nd<T>> x) {
  return static_cast<reduce_result_t<T>>(detail::reduce<T>(ctx, detail::plan::Kind::asum, x, nullptr).value);
}
template <class T>
reduce_result_t<T> dot(Context& ctx, Span<const detail::nd<T>> x, Span<const detail::nd<T>> y) {
  return static_cast<reduce_result_t<T>>(detail::reduce<T>(ctx, detail::plan::Kind::dot, x, &y).value);
}
template <class T>
reduce_result_t<T> norm2(Context& ctx, Span<const detail::nd<T>> x) {
  return static_cast<reduce_result_t<T>>(detail::reduce<T>(ctx, detail::plan::Kind::norm2, x, nullptr).value);
}
template <class T>
Extremum<T> min_element(Context& ctx, Span<const detail::nd<T>> x) {
  return detail::extremum<T>(ctx, detail::plan::Kind::min, x);
}
template <class T>
Extremum<T> max_element(Context& ctx, Span<const detail::nd<T>> x) {
  return detail::extremum<T>(ctx, detail::plan::Kind::max, x);
}

template <class T>
void sum(Context& ctx, Span<const detail::nd<T>> x, Span<reduce_result_t<T>> result) {
  detail::reduce<T>(ctx, detail::plan::Kind::sum, x, nullptr, &result);
}
template <class T>
void asum(Context& ctx, Span<const detail::nd<T>> x, Span<reduce_result_t<T>> result) {
  detail::reduce<T>(ctx, detail::plan::Kind::asum, x, nullptr, &result);
}
template <class T>
void dot(Context& ctx, Span<const detail::nd<T>> x, Span<const detail::nd<T>> y, Span<reduce_result_t<T>> result) {
  detail::reduce<T>(ctx, detail::plan::Kind::dot, x, &y, &result);
}
template <class T>
void norm2(Context& ctx, Span<const detail::nd<T>> x, Span<reduce_result_t<T>> result) {
  detail::reduce<T>(ctx, detail::plan::Kind::norm2, x, nullptr, &result);
}

#define EW_REDUCE_INSTANTIATE(T)                                                    \
  template reduce_result_t<T> sum<T>(Context&, Span<const T>);                      \
  template reduce_result_t<T> asum<T>(Context&, Span<const T>);                     \
  template reduce_result_t<T> dot<T>(Context&, Span<const T>, Span<const T>);       \
  template reduce_result_t<T> norm2<T>(Context&, Span<const T>);                    \
  template Extremum<T> min_element<T>(Context&, Span<const T>);                     \
  template Extremum<T> max_element<T>(Context&, Span<const T>);                     \
  template void sum<T>(Context&, Span<const T>, Span<reduce_result_t<T>>);          \
  template void asum<T>(Context&, Span<const T>, Span<reduce_result_t<T>>);         \
  template void dot<T>(Context&, Span<const T>, Span<const T>, Span<reduce_result_t<T>>); \
  template void norm2<T>(Context&, Span<const T>, Span<reduce_result_t<T>>);
EW_REDUCE_INSTANTIATE(float)
EW_REDUCE_INSTANTIATE(double)
EW_REDUCE_INSTANTIATE(half)
EW_REDUCE_INSTANTIATE(bfloat16)

}  // namespace ew
