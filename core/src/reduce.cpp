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

template <class T>
ReduceResult reduce(Context& ctx, plan::Kind kind, Span<const T> x, const Span<const T>* y) {
  const char* call = call_name(kind);
  BackendImpl& backend = checked_backend(ctx, call);
  const std::size_t n = x.size;
  if (y) check_size(call, "y", y->size, "x", n);
  if (n == 0) {
    if (kind == plan::Kind::min) return {std::numeric_limits<double>::infinity(), no_index};
    if (kind == plan::Kind::max) return {-std::numeric_limits<double>::infinity(), no_index};
    return {0.0, 0};
  }
  check_operand(call, "x", x.data, n, sizeof(T));
  if (y) check_operand(call, "y", y->data, n, sizeof(T));

  ReduceCall c{};
  c.call = call;
  c.kind = kind;
  c.dtype = dtype_v<T>;
  c.n = n;
  c.x = x.data;
  c.x_space = check_memory_space(ctx, call, "x", x.data, x.space);
  if (y) {
    c.y = y->data;
    c.y_space = check_memory_space(ctx, call, "y", y->data, y->space);
  }
  try {
    return backend.run_reduce(c);
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
T sum(Context& ctx, Span<const detail::nd<T>> x) {
  return static_cast<T>(detail::reduce<T>(ctx, detail::plan::Kind::sum, x, nullptr).value);
}
template <class T>
T asum(Context& ctx, Span<const detail::nd<T>> x) {
  return static_cast<T>(detail::reduce<T>(ctx, detail::plan::Kind::asum, x, nullptr).value);
}
template <class T>
T dot(Context& ctx, Span<const detail::nd<T>> x, Span<const detail::nd<T>> y) {
  return static_cast<T>(detail::reduce<T>(ctx, detail::plan::Kind::dot, x, &y).value);
}
template <class T>
T norm2(Context& ctx, Span<const detail::nd<T>> x) {
  return static_cast<T>(detail::reduce<T>(ctx, detail::plan::Kind::norm2, x, nullptr).value);
}
template <class T>
Extremum<T> min_element(Context& ctx, Span<const detail::nd<T>> x) {
  return detail::extremum<T>(ctx, detail::plan::Kind::min, x);
}
template <class T>
Extremum<T> max_element(Context& ctx, Span<const detail::nd<T>> x) {
  return detail::extremum<T>(ctx, detail::plan::Kind::max, x);
}

#define EW_REDUCE_INSTANTIATE(T)                                    \
  template T sum<T>(Context&, Span<const T>);                       \
  template T asum<T>(Context&, Span<const T>);                      \
  template T dot<T>(Context&, Span<const T>, Span<const T>);        \
  template T norm2<T>(Context&, Span<const T>);                     \
  template Extremum<T> min_element<T>(Context&, Span<const T>);     \
  template Extremum<T> max_element<T>(Context&, Span<const T>);
EW_REDUCE_INSTANTIATE(float)
EW_REDUCE_INSTANTIATE(double)

}  // namespace ew
