// Special values (NaN, +-inf, +-0, subnormals, the largest and smallest normals, ties
// of rounding) through every operator and function, on every backend: bit for bit
// against the scalar backend, and, for every operation whose bits IEEE 754 defines,
// against <cmath> (an independent check of the reference itself). min and max follow
// ew/expr.hpp's rule; exp, log, tanh and sigmoid give C's Annex F values at their
// special points.
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "expr_support.hpp"

namespace ew::test {
namespace {

enum class F {
  neg, abs, sqrt, floor, ceil, trunc, round, exp, log, tanh, sigmoid,
  add, sub, mul, div, min, max, lt, le, gt, ge, eq, ne, fma, select
};
constexpr F unary_fns[] = {F::neg, F::abs, F::sqrt, F::floor, F::ceil, F::trunc, F::round, F::exp, F::log, F::tanh, F::sigmoid};
constexpr F binary_fns[] = {F::add, F::sub, F::mul, F::div, F::min, F::max, F::lt, F::le, F::gt, F::ge, F::eq, F::ne};
const char* const names[] = {"neg", "abs", "sqrt", "floor", "ceil", "trunc", "round", "exp", "log", "tanh", "sigmoid",
                             "add", "sub", "mul", "div", "min", "max", "lt", "le", "gt", "ge", "eq", "ne", "fma", "select"};

Expr build(F f, const Expr& a, const Expr& b = {}, const Expr& c = {}) {
  switch (f) {
    case F::neg: return -a;
    case F::abs: return ew::abs(a);
    case F::sqrt: return ew::sqrt(a);
    case F::floor: return ew::floor(a);
    case F::ceil: return ew::ceil(a);
    case F::trunc: return ew::trunc(a);
    case F::round: return ew::round(a);
    case F::exp: return ew::exp(a);
    case F::log: return ew::log(a);
    case F::tanh: return ew::tanh(a);
    case F::sigmoid: return ew::sigmoid(a);
    case F::add: return a + b;
    case F::sub: return a - b;
    case F::mul: return a * b;
    case F::div: return a / b;
    case F::min: return ew::min(a, b);
    case F::max: return ew::max(a, b);
    case F::lt: return a < b;
    case F::le: return a <= b;
    case F::gt: return a > b;
    case F::ge: return a >= b;
    case F::eq: return a == b;
    case F::ne: return a != b;
    case F::fma: return ew::fma(a, b, c);
    default: return ew::select(a, b, c);
  }
}

// min/max as ew/expr.hpp states them: NaN if either is NaN (the first one's if both),
// else the smaller/larger, the first operand where they compare equal.
template <class T> T documented_min(T a, T b) { return std::isnan(a) ? a : std::isnan(b) ? b : b < a ? b : a; }
template <class T> T documented_max(T a, T b) { return std::isnan(a) ? a : std::isnan(b) ? b : b > a ? b : a; }

// The value <cmath> and IEEE arithmetic give in T, or false where the library defines
// its own bits (exp, log, tanh, sigmoid).
template <class T>
bool independent(F f, T a, T b, T c, T& out) {
  switch (f) {
    case F::neg: out = -a; return true;
    case F::abs: out = std::fabs(a); return true;
    case F::sqrt: out = std::sqrt(a); return true;
    case F::floor: out = std::floor(a); return true;
    case F::ceil: out = std::ceil(a); return true;
    case F::trunc: out = std::trunc(a); return true;
    case F::round: out = std::round(a); return true;
    case F::add: out = a + b; return true;
    case F::sub: out = a - b; return true;
    case F::mul: out = a * b; return true;
    case F::div: out = a / b; return true;
    case F::min: out = documented_min(a, b); return true;
    case F::max: out = documented_max(a, b); return true;
    case F::lt: out = a < b ? T(1) : T(0); return true;
    case F::le: out = a <= b ? T(1) : T(0); return true;
    case F::gt: out = a > b ? T(1) : T(0); return true;
    case F::ge: out = a >= b ? T(1) : T(0); return true;
    case F::eq: out = a == b ? T(1) : T(0); return true;
    case F::ne: out = a != b ? T(1) : T(0); return true;
    case F::fma: out = std::fma(a, b, c); return true;
    case F::select: out = a != T(0) ? b : c; return true;
    default: return false;
  }
}

template <class T>
std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  const T half = T(0.5);
  return {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0), L::denorm_min(),
          -L::denorm_min(), L::min() / T(3), -L::min() / T(3), L::min(), -L::min(), L::max(), -L::max(), T(1), T(-1),
          half, -half, T(1.5), T(-2.5), T(2.5), std::nextafter(half, T(0)), std::ldexp(T(1), L::digits - 1) + T(1),
          T(3), -std::nextafter(L::max(), T(0))};
}

// Where exp, log, tanh and sigmoid change behaviour (overflow, underflow, saturation).
template <class T>
std::vector<T> function_edges() {
  std::vector<T> v = specials<T>();
  for (double x : {88.72, 89.0, -87.3, -103.9, -104.0, 709.7, 710.0, -745.1, -746.0, 20.0, -20.0, 1e-8, -1e-8, 0.1, 44.4,
                   -44.4, 9.0, -9.0, 0.6931471805599453, 1e-300, 1e-30})
    v.push_back(static_cast<T>(x));
  return v;
}

// One kernel over `columns` (one per input slot), on `ctx` and on the scalar backend:
// the same bits, guards untouched; then every element against `expect` where it gives
// a value. `what` names the case in a failure.
void check_kernel(Context& ctx, const Kernel& k, std::vector<HostArray> columns, const std::vector<double>& params,
                  const std::function<bool(std::size_t, double&)>& expect, const std::string& what) {
  CallData c;
  c.n = columns.empty() ? 0 : columns[0].size();
  c.inputs = std::move(columns);
  c.params = params;
  const std::vector<HostArray> want = reference_outputs(k, c);
  const std::string m = run_and_compare(ctx, k, c, Layout::offsets(2, c.inputs.size(), want.size()), want);
  ASSERT_TRUE(m.empty()) << what << ": differs from the scalar backend: " << m << "\n" << describe(k, c);
  for (std::size_t i = 0; i < c.n; ++i) {
    double e;
    if (!expect(i, e)) continue;
    HostArray one(want[0].dtype, 1);
    one.set(0, e);
    if (!want[0].same_at(i, one, 0)) {
      std::string operands;
      for (const HostArray& in : c.inputs) operands += in.show(i) + " ";
      ADD_FAILURE() << what << " of " << operands << "is " << want[0].show(i) << ", IEEE/<cmath> gives " << one.show(0);
      return;
    }
  }
}

template <class T>
HostArray column(const std::vector<T>& v) {
  HostArray a;
  a.dtype = dtype_v<T>;
  if constexpr (std::is_same_v<T, float>) a.f = v;
  else a.d = v;
  return a;
}

using Param = std::tuple<Backend, int>;
class ExprSpecial : public testing::TestWithParam<Param> {};

// Every unary function in both dtypes over the specials and its edges, repeated at
// three shifts so that each value meets vector lanes and tails.
template <class T>
void unary(Context& ctx, F f) {
  std::vector<T> base = function_edges<T>(), v;
  for (int rep = 0; rep < 3; ++rep) {
    v.insert(v.end(), base.begin(), base.end());
    std::rotate(base.begin(), base.begin() + 1, base.end());
  }
  const Kernel k = compile({build(f, input<T>(0))});
  check_kernel(ctx, k, {column(v)}, {}, [&](std::size_t i, double& e) {
    T out;
    if (!independent<T>(f, v[i], T(0), T(0), out)) return false;
    e = out;
    return true;
  }, std::string(names[static_cast<int>(f)]) + "." + to_string(dtype_v<T>));
}

// Every pair of specials; A and B may differ in dtype (the node computes in the wider).
template <class A, class B>
void binary(Context& ctx, F f) {
  using W = std::conditional_t<std::is_same_v<A, double> || std::is_same_v<B, double>, double, float>;
  const std::vector<A> sa = specials<A>();
  const std::vector<B> sb = specials<B>();
  std::vector<A> a;
  std::vector<B> b;
  for (A x : sa)
    for (B y : sb) a.push_back(x), b.push_back(y);
  const Kernel k = compile({build(f, input<A>(0), input<B>(1))});
  ASSERT_EQ(k.output_dtype(0), dtype_v<W>);
  const std::string what = std::string(names[static_cast<int>(f)]) + "(" + to_string(dtype_v<A>) + ", " + to_string(dtype_v<B>) + ")";
  check_kernel(ctx, k, {column(a), column(b)}, {}, [&](std::size_t i, double& e) {
    W out;
    independent<W>(f, static_cast<W>(a[i]), static_cast<W>(b[i]), W(0), out);
    e = out;
    return true;
  }, what);
  // The second operand as a param, and as a plain number, each special in turn.
  const Kernel kp = compile({build(f, input<A>(0), param<B>(0))});
  for (B y : sb) {
    check_kernel(ctx, kp, {column(sa)}, {static_cast<double>(y)}, [&](std::size_t i, double& e) {
      W out;
      independent<W>(f, static_cast<W>(sa[i]), static_cast<W>(y), W(0), out);
      e = out;
      return true;
    }, what + " with a param");
    if (testing::Test::HasFailure()) return;
    // A plain number takes the dtype of the operand it meets (A here).
    const Kernel kc = compile({build(f, input<A>(0), Expr(static_cast<double>(y)))});
    check_kernel(ctx, kc, {column(sa)}, {}, [&](std::size_t i, double& e) {
      A out;
      independent<A>(f, sa[i], static_cast<A>(y), A(0), out);
      e = out;
      return true;
    }, what + " with a number");
    if (testing::Test::HasFailure()) return;
  }
}

template <class T>
void ternary(Context& ctx, F f) {
  const std::vector<T> s = specials<T>();
  std::vector<T> a, b, c;
  for (T x : s)
    for (T y : s)
      for (T z : s) a.push_back(x), b.push_back(y), c.push_back(z);
  const Kernel k = compile({build(f, input<T>(0), input<T>(1), input<T>(2))});
  check_kernel(ctx, k, {column(a), column(b), column(c)}, {}, [&](std::size_t i, double& e) {
    T out;
    independent<T>(f, a[i], b[i], c[i], out);
    e = out;
    return true;
  }, std::string(names[static_cast<int>(f)]) + "." + to_string(dtype_v<T>));
}

// select's condition keeps its own dtype: every special of either dtype as a condition.
template <class C, class T>
void select_condition(Context& ctx) {
  const std::vector<C> cond = specials<C>();
  std::vector<T> a(cond.size(), T(1.25)), b(cond.size(), -std::numeric_limits<T>::infinity());
  const Kernel k = compile({ew::select(input<C>(0), input<T>(1), input<T>(2))});
  ASSERT_EQ(k.output_dtype(0), dtype_v<T>);
  check_kernel(ctx, k, {column(cond), column(a), column(b)}, {}, [&](std::size_t i, double& e) {
    e = cond[i] != C(0) ? a[i] : b[i];  // a NaN condition is != 0
    return true;
  }, std::string("select with a ") + to_string(dtype_v<C>) + " condition");
}

// f32 -> f64 is exact; f64 -> f32 rounds to nearest even (overflow, subnormals, ties).
void casts(Context& ctx) {
  const std::vector<float> f = specials<float>();
  const Kernel widen = compile({cast<double>(input<float>(0))});
  check_kernel(ctx, widen, {column(f)}, {}, [&](std::size_t i, double& e) { return e = f[i], true; }, "cast f32 -> f64");

  std::vector<double> d = specials<double>();
  const double fmax = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::denorm_min();
  const double ulp_at_max = std::ldexp(1.0, 104);
  for (double x : {fmax, fmax + ulp_at_max / 2, std::nextafter(fmax + ulp_at_max / 2, 0.0), -(fmax + ulp_at_max / 2),
                   tiny, tiny / 2, std::nextafter(tiny / 2, 1.0), tiny * 0.75, tiny * 1.5, tiny * 2.5, -tiny / 2,
                   1 + std::ldexp(1.0, -24), 1 + 3 * std::ldexp(1.0, -24), 1 + std::ldexp(1.0, -24) + std::ldexp(1.0, -60),
                   -1e-50, 1e-310, 0.1, 1e39, static_cast<double>(std::numeric_limits<float>::min()) * (1 - 0x1p-25)})
    d.push_back(x);
  const Kernel narrow = compile({cast<float>(input<double>(0))});
  check_kernel(ctx, narrow, {column(d)}, {}, [&](std::size_t i, double& e) {
    return e = static_cast<float>(d[i]), true;
  }, "cast f64 -> f32");
}

TEST_P(ExprSpecial, ThroughEveryOperation) {
  auto [backend, group] = GetParam();
  EW_EXPR_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  switch (group) {
    case 0:
      for (F f : unary_fns) {
        unary<float>(ctx, f);
        unary<double>(ctx, f);
        if (HasFailure()) return;
      }
      break;
    case 1:
      for (F f : binary_fns) {
        binary<float, float>(ctx, f);
        binary<double, double>(ctx, f);
        binary<float, double>(ctx, f);
        binary<double, float>(ctx, f);
        if (HasFailure()) return;
      }
      break;
    case 2:
      ternary<float>(ctx, F::fma);
      ternary<double>(ctx, F::fma);
      ternary<float>(ctx, F::select);
      ternary<double>(ctx, F::select);
      select_condition<float, double>(ctx);
      select_condition<double, float>(ctx);
      break;
    default:
      casts(ctx);
  }
}

std::string group_name(const testing::TestParamInfo<Param>& info) {
  static const char* const groups[] = {"unary", "binary", "ternary", "casts"};
  return groups[std::get<1>(info.param)];
}

#define EW_INSTANTIATE_FOR(backend)                                                                          \
  INSTANTIATE_TEST_SUITE_P(backend, ExprSpecial,                                                             \
                           testing::Combine(testing::Values(Backend::backend), testing::Range(0, 4)), group_name)
EW_INSTANTIATE_FOR(scalar);
EW_INSTANTIATE_FOR(highway);
EW_INSTANTIATE_FOR(kokkos);
EW_INSTANTIATE_FOR(cuda);

// exp, log, tanh and sigmoid at their special points (C Annex F; sigmoid = 1/(1+exp(-x))).
class ExprFunctionEdges : public testing::TestWithParam<Backend> {};

template <class T>
void annex_f(Context& ctx) {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), nan = L::quiet_NaN();
  struct Point {
    F f;
    T x, y;
  };
  const Point points[] = {
      {F::exp, T(0), T(1)},        {F::exp, -T(0), T(1)},     {F::exp, inf, inf},           {F::exp, -inf, T(0)},
      {F::exp, nan, nan},          {F::exp, T(1000), inf},    {F::exp, T(-1000), T(0)},     {F::log, T(0), -inf},
      {F::log, -T(0), -inf},       {F::log, T(1), T(0)},      {F::log, T(-1), nan},         {F::log, -inf, nan},
      {F::log, inf, inf},          {F::log, nan, nan},        {F::log, -L::denorm_min(), nan}, {F::tanh, T(0), T(0)},
      {F::tanh, -T(0), -T(0)},     {F::tanh, inf, T(1)},      {F::tanh, -inf, T(-1)},       {F::tanh, nan, nan},
      {F::tanh, T(40), T(1)},      {F::tanh, T(-40), T(-1)},  {F::sigmoid, inf, T(1)},      {F::sigmoid, -inf, T(0)},
      {F::sigmoid, nan, nan},      {F::sigmoid, T(0), T(0.5)}, {F::sigmoid, -T(0), T(0.5)}, {F::sigmoid, T(800), T(1)},
  };
  for (const Point& p : points) {
    const Kernel k = compile({build(p.f, input<T>(0))});
    std::vector<T> x(37, p.x);  // a vector's worth and a tail
    check_kernel(ctx, k, {column(x)}, {}, [&](std::size_t, double& e) { return e = p.y, true; },
                 std::string(names[static_cast<int>(p.f)]) + "." + to_string(dtype_v<T>));
    if (testing::Test::HasFailure()) return;
  }
  // Finite, and of the right size, at the ends of the finite range.
  const Kernel lg = compile({ew::log(input<T>(0))});
  std::vector<T> ends = {L::denorm_min(), L::min(), L::max()};
  check_kernel(ctx, lg, {column(ends)}, {}, [&](std::size_t i, double& e) {
    (void)i, (void)e;
    return false;
  }, "log at the ends");
  Context scalar(Backend::scalar);
  std::vector<T> got(3);
  lg(scalar, {ends}, {got});
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(got[i], std::log(ends[i]), std::fabs(std::log(ends[i])) * 1e-6) << "log(" << ends[i] << ")";
}

TEST_P(ExprFunctionEdges, AnnexFValues) {
  const Backend backend = GetParam();
  EW_EXPR_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  annex_f<float>(ctx);
  annex_f<double>(ctx);
}

INSTANTIATE_TEST_SUITE_P(scalar, ExprFunctionEdges, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, ExprFunctionEdges, testing::Values(Backend::highway));
INSTANTIATE_TEST_SUITE_P(kokkos, ExprFunctionEdges, testing::Values(Backend::kokkos));
INSTANTIATE_TEST_SUITE_P(cuda, ExprFunctionEdges, testing::Values(Backend::cuda));

}  // namespace
}  // namespace ew::test
